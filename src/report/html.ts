import { escapeXml } from './format.js';

/** One part of a report page: a heading and ready HTML (an inline SVG, a table). */
export interface ReportSection {
  heading: string;
  /** Already-safe HTML. */
  html: string;
  /** One line under the heading, plain text. */
  caption?: string;
}

const BODY_STYLE =
  'body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;' +
  'margin:0;background:#f6f6f4;color:#222;line-height:1.4}';

const STYLE = `
:root{color-scheme:light}
${BODY_STYLE}
main{max-width:1240px;margin:0 auto;padding:16px 20px 40px}
h1{font-size:1.45rem;margin:.4rem 0 .2rem}
h2{font-size:1.1rem;margin:1.6rem 0 .4rem}
.meta{color:#666;font-size:.85rem;margin:0 0 1rem}
.caption{color:#555;font-size:.9rem;margin:0 0 .5rem}
section{background:#fff;border:1px solid #e2e2e0;border-radius:6px;padding:8px 14px 12px;margin:12px 0}
figure{margin:0;overflow-x:auto}
figure svg{max-width:100%;height:auto;display:block}
table{border-collapse:collapse;font-size:.9rem;font-variant-numeric:tabular-nums}
th,td{padding:3px 6px;border-bottom:1px solid #eee;text-align:right;white-space:nowrap}
th{white-space:normal;vertical-align:bottom}
th{background:#fafafa;font-weight:600}
table.kv td,td.note,th.note{text-align:left}
table.kv td:first-child{color:#555;padding-right:24px}
table.kv td:last-child{white-space:normal}
td.note{text-align:left;white-space:normal;color:#666}
.wrap{overflow-x:auto}
`;

/**
 * A key–value table (summary of one step); not in a scrolling box, so its values wrap (see STYLE) on a narrow screen.
 */
export function keyValueTable(rows: readonly [string, string][]): string {
  const cells = rows.map(([k, v]) => `<tr><td>${escapeXml(k)}</td><td>${escapeXml(v)}</td></tr>`);
  return `<table class="kv">${cells.join('')}</table>`;
}

/** A table with a header row; the last column is left-aligned when `noteColumn` is set. */
export function dataTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  className = 'data',
  noteColumn = false,
): string {
  const noteClass = (last: boolean): string => (noteColumn && last ? ' class="note"' : '');
  const headCells = header.map((h, i) => `<th${noteClass(i === header.length - 1)}>${escapeXml(h)}</th>`);
  const head = `<tr>${headCells.join('')}</tr>`;
  const body = rows
    .map((r) => `<tr>${r.map((c, i) => `<td${noteClass(i === r.length - 1)}>${escapeXml(c)}</td>`).join('')}</tr>`)
    .join('');
  return `<div class="wrap"><table class="${className}">${head}${body}</table></div>`;
}

/** Wraps an SVG string for a page. */
export function figure(svg: string): string {
  return `<figure>${svg}</figure>`;
}

/**
 * One self-contained HTML page: inline CSS and inline SVGs, no scripts, fonts or anything else fetched,
 * so it opens offline and can be mailed around. Sized for a laptop screen (content at most 1240 px wide,
 * figures shrink to fit).
 */
export function reportPage(title: string, meta: string, sections: readonly ReportSection[]): string {
  const body = sections
    .map((s) => {
      const caption = s.caption ? `<p class="caption">${escapeXml(s.caption)}</p>` : '';
      return `<section><h2>${escapeXml(s.heading)}</h2>${caption}${s.html}</section>`;
    })
    .join('\n');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>${escapeXml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<h1>${escapeXml(title)}</h1>
<p class="meta">${escapeXml(meta)}</p>
${body}
</main>
</body>
</html>
`;
}
