/** Number formatting for reports (kept here so that `src/report` does not reach up into `src/cli`). */

/** Bytes with a binary unit (B, KiB, MiB, GiB, TiB), 3 significant digits. */
export function bytesText(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = bytes;
  let i = 0;
  while (Math.abs(v) >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${Math.round(v)} B` : `${v.toFixed(v >= 100 ? 0 : v >= 10 ? 1 : 2)} ${units[i]}`;
}

/** A time unit for an axis or a label: its name and how many nanoseconds it holds. */
export interface TimeUnit {
  name: 'ns' | 'µs' | 'ms' | 's';
  ns: number;
}

/**
 * The unit in which `spanNs` reads as 1 … 999 (ns, µs, ms) or as seconds from 1 s up, so that
 * axis ticks come out as short round numbers (0, 20, 40 … ms rather than 0, 20000000 … ns).
 */
export function timeUnitFor(spanNs: number): TimeUnit {
  if (spanNs >= 1e9) return { name: 's', ns: 1e9 };
  if (spanNs >= 1e6) return { name: 'ms', ns: 1e6 };
  if (spanNs >= 1e3) return { name: 'µs', ns: 1e3 };
  return { name: 'ns', ns: 1 };
}

/** A duration in ns, in the unit that gives 3–4 significant digits (`106.81 ms`, `687.6 µs`). */
export function durationText(ns: number): string {
  const u = timeUnitFor(Math.abs(ns));
  const v = ns / u.ns;
  const digits = u.name === 'ns' ? 0 : Math.abs(v) >= 100 ? 1 : 2;
  return `${v.toFixed(digits)} ${u.name}`;
}

/** A fraction (0.531) as a percentage (`53.1%`). */
export function percentText(fraction: number, digits = 1): string {
  return `${(100 * fraction).toFixed(digits)}%`;
}

/** A large count with thousands separators (`1,227,119`). */
export function countText(n: number, digits = 0): string {
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** Escapes text for HTML/XML content and attribute values. */
export function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** The parallel sizes as the outputs print them: `tp 2 × cp 2 × pp 4 × dp 2` (cp only when used, dp when given). */
export function parallelSizesText(p: { tp: number; pp: number; cp?: number; dp?: number }): string {
  return `tp ${p.tp}${(p.cp ?? 1) > 1 ? ` × cp ${p.cp}` : ''} × pp ${p.pp}${p.dp !== undefined ? ` × dp ${p.dp}` : ''}`;
}

/** TFLOP/s with one decimal, or three significant digits below 10 (a CPU's 0.0520 would read 0.1). */
export function tflopsText(tflops: number): string {
  return tflops >= 10 || tflops === 0 ? tflops.toFixed(1) : tflops.toPrecision(3);
}

/** How each context-parallel communication type (`parallel.cpCommType`) is named. */
const CP_COMM_TEXT: Record<string, string> = {
  p2p: 'ring (p2p)',
  all_gather: 'key/value all-gather',
  a2a: 'all-to-all',
};

/** What of a strategy the outputs name beside its sizes (a step result's `parallel`, or a scenario's). */
export interface StrategyParts {
  tp: number;
  pp: number;
  dp?: number;
  cp?: number;
  cpCommType?: string;
  /** Expert-parallel size (models with experts). */
  ep?: number;
  /** Expert tensor-parallel size where it is not tp. */
  etp?: number;
  schedule?: string;
  virtualStages?: number;
  zero?: number;
  offload?: string;
  sequenceParallel?: boolean;
  tpCommOverlap?: boolean;
  recompute?: string;
}

/**
 * The strategy in one line, the same in the text summary, the HTML report and `memory`:
 * `tp 8 × pp 16 × dp 8, interleaved (3 chunks/stage), ZeRO-1 + CPU offload, sequence parallel, selective recompute`.
 */
export function strategyText(p: StrategyParts): string {
  const parts = [
    parallelSizesText(p),
    p.cpCommType ? `context parallel by ${CP_COMM_TEXT[p.cpCommType] ?? p.cpCommType}` : '',
    (p.ep ?? 1) > 1 || p.etp !== undefined
      ? `experts over ep ${p.ep ?? 1}${p.etp !== undefined ? ` × expert tp ${p.etp}` : ''}`
      : '',
    p.pp > 1 && p.schedule
      ? `${p.schedule}${(p.virtualStages ?? 1) > 1 ? ` (${p.virtualStages} chunks/stage)` : ''}`
      : '',
    (p.zero ?? 0) > 0 ? `ZeRO-${p.zero}${p.offload === 'cpu' ? ' + CPU offload' : ''}` : '',
    p.sequenceParallel ? `sequence parallel${p.tpCommOverlap ? ' (communication overlapped with GEMMs)' : ''}` : '',
    p.recompute && p.recompute !== 'none' ? `${p.recompute} recompute` : '',
  ];
  return parts.filter((x) => x !== '').join(', ');
}

/** The widest line the text summaries print outside their tables, in characters. */
export const SUMMARY_WIDTH = 114;

/**
 * `prefix` then `text`, wrapped to `width` columns, later lines indented under the text's start (or by `indent`):
 * the summaries' prose lines (notes, the bottleneck) this way fit a terminal instead of running to 300 columns.
 */
export function wrapAfter(
  prefix: string,
  text: string,
  width = SUMMARY_WIDTH,
  indent = ' '.repeat(prefix.length),
): string[] {
  const [first = '', ...rest] = wrapWords(text, width - prefix.length);
  return [`${prefix}${first}`, ...rest.map((l) => `${indent}${l}`)];
}

/** `prefix` then `items` joined by ', ', wrapped between items (never inside one), later lines under the first item. */
export function wrapItems(prefix: string, items: readonly string[], width = SUMMARY_WIDTH): string[] {
  const indent = ' '.repeat(prefix.length);
  const lines: string[] = [];
  let line = '';
  items.forEach((item, i) => {
    const piece = i < items.length - 1 ? `${item},` : item;
    if (line !== '' && prefix.length + line.length + 1 + piece.length > width) {
      lines.push(line);
      line = piece;
    } else line = line === '' ? piece : `${line} ${piece}`;
  });
  return [...lines, line].map((l, i) => `${i === 0 ? prefix : indent}${l}`);
}

/** Words of `text` in lines of at most `width` characters (a longer word has a line of its own). */
export function wrapWords(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter((w) => w !== '')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') lines.push(line);
  return lines;
}
