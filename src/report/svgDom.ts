import { JSDOM } from 'jsdom';
import * as d3 from 'd3';

export const SVG_NS = 'http://www.w3.org/2000/svg';

/** A d3 selection of a detached `<svg>` element. */
export type SvgSelection = d3.Selection<SVGSVGElement, unknown, null, undefined>;

let dom: JSDOM | undefined;

/** One shared, script-less jsdom window: charts are built in it and serialised, never displayed. */
function window(): JSDOM['window'] {
  dom ??= new JSDOM('<!DOCTYPE html><html><body></body></html>');
  return dom.window;
}

/**
 * Creates a detached `<svg>` of `widthPx` × `heightPx` with a matching viewBox, so that it scales
 * down to its container in a page (`max-width: 100%`) and keeps its size as a standalone file.
 */
export function createSvg(widthPx: number, heightPx: number, className: string): SvgSelection {
  const el = window().document.createElementNS(SVG_NS, 'svg') as SVGSVGElement;
  return d3
    .select(el)
    .attr('xmlns', SVG_NS)
    .attr('class', className)
    .attr('width', widthPx)
    .attr('height', heightPx)
    .attr('viewBox', `0 0 ${widthPx} ${heightPx}`)
    .attr('font-family', 'system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif')
    .attr('font-size', 12) as SvgSelection;
}

/** Serialises a chart as XML, so the same string is a valid `.svg` file and valid inline HTML. */
export function serializeSvg(svg: SvgSelection): string {
  const w = window();
  return new w.XMLSerializer().serializeToString(svg.node()!);
}

/** Rounds a pixel coordinate to 0.1 px: finer detail is invisible and only makes files bigger. */
export function px(v: number): number {
  return Math.round(v * 10) / 10;
}

/**
 * Lays legend entries out left to right, wrapping at `maxWidthPx`. Each entry is a swatch drawn by
 * `swatch` and a label; returns the height used, px.
 */
export function drawLegend<T>(
  parent: d3.Selection<SVGGElement, unknown, null, undefined>,
  items: readonly T[],
  label: (item: T) => string,
  swatch: (g: d3.Selection<SVGGElement, unknown, null, undefined>, item: T) => void,
  maxWidthPx: number,
  attrs: (item: T) => Record<string, string> = () => ({}),
): number {
  const rowHeight = 18;
  let x = 0;
  let y = 0;
  for (const item of items) {
    const text = label(item);
    // No layout engine in jsdom: estimate text width from the character count (≈ 6.6 px at 12 px).
    const w = 22 + text.length * 6.6 + 14;
    if (x > 0 && x + w > maxWidthPx) {
      x = 0;
      y += rowHeight;
    }
    const g = parent
      .append('g')
      .attr('class', 'legend-item')
      .attr('transform', `translate(${px(x)},${y})`);
    for (const [k, v] of Object.entries(attrs(item))) g.attr(k, v);
    swatch(g, item);
    g.append('text').attr('x', 20).attr('y', 11).text(text);
    x += w;
  }
  return items.length === 0 ? 0 : y + rowHeight;
}
