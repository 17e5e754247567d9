import type { MeasuredCollectiveTable } from '../sim/collectives/measuredTable.js';
import type { NcclTestsOp } from '../sim/collectives/types.js';

/**
 * Reads measured collective times from the two layouts people have them in:
 * - the text nccl-tests prints (`all_reduce_perf -b 8 -e 8G -f 2`): rows of size, count, type, redop,
 *   root (newer versions), then the out-of-place time in µs, algbw, busbw, …; lines starting with `#`
 *   are headers;
 * - a CSV whose header names the size column `size(B)` (or `size`) and a time column `time(ns)` or
 *   `time(us)` (the layout vTrain publishes its nccl-tests tables in); the first time column is taken
 *   (nccl-tests' out-of-place run); `#` lines are comments.
 * Returns the points sorted by size (a size measured twice keeps its first time), or throws an Error
 * saying which line is wrong.
 */
export function parseCollectiveTable(
  text: string,
  op: NcclTestsOp,
  ranks: number,
  source: string,
): MeasuredCollectiveTable {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  // A CSV has a header line naming its size column; nccl-tests output (even with NCCL_DEBUG lines, which
  // hold commas) has none.
  const headerAt = lines.findIndex(
    (l) => !isComment(l) && l.split(',').some((c) => SIZE_HEADERS.includes(c.trim().toLowerCase())),
  );
  if (headerAt < 0) checkRankCount(lines, ranks, source);
  const points = headerAt >= 0 ? parseCsv(lines, headerAt, source) : parseNcclTestsText(lines, op, source);
  if (points.length === 0)
    throw new Error(
      `${source}: no measurements found (expected nccl-tests output or a CSV with size(B) and time(ns) ` +
        'or time(us) columns)',
    );
  const seen = new Set<number>();
  const unique = points.filter((p) => (seen.has(p.bytes) ? false : (seen.add(p.bytes), true)));
  unique.sort((a, b) => a.bytes - b.bytes);
  return { op, ranks, points: unique, source };
}

type Point = { bytes: number; timeNs: number };

function checkedPoint(bytes: number, timeNs: number, where: string): Point {
  if (!(bytes > 0) || !(timeNs > 0))
    throw new Error(`${where}: size and time must be positive numbers (got size ${bytes}, time ${timeNs} ns)`);
  return { bytes, timeNs };
}

const SIZE_HEADERS = ['size(b)', 'size'];

/** Blank lines and `#` comments (nccl-tests headers and summary lines) carry no measurement. */
function isComment(line: string): boolean {
  const t = line.trim();
  return t === '' || t.startsWith('#');
}

function parseCsv(lines: string[], headerAt: number, source: string): Point[] {
  const header = lines[headerAt].split(',').map((h) => h.trim().toLowerCase());
  const sizeCol = header.findIndex((h) => SIZE_HEADERS.includes(h));
  const timeCol = header.findIndex((h) => h === 'time(ns)' || h === 'time(us)');
  if (timeCol < 0)
    throw new Error(
      `${source}: the CSV header needs a time(ns) or time(us) ` +
        `column next to ${header[sizeCol]} (found: ${header.join(', ')})`,
    );
  const scale = header[timeCol] === 'time(us)' ? 1e3 : 1;
  const out: Point[] = [];
  lines.forEach((line, i) => {
    if (i <= headerAt || isComment(line)) return;
    const cells = line.split(',');
    out.push(checkedPoint(Number(cells[sizeCol]), Number(cells[timeCol]) * scale, `${source} line ${i + 1}`));
  });
  return out;
}

/**
 * nccl-tests lists every rank it ran on (`#  Rank  0 Group  0 Pid … device  0 [0x07] NVIDIA A100…`); when those
 * lines are there, their count must be the GPU count the table is declared for.
 */
function checkRankCount(lines: string[], ranks: number, source: string): void {
  const listed = lines.filter((l) => /^#\s*Rank\s+\d+\b/.test(l.trim())).length;
  if (listed > 0 && listed !== ranks) {
    throw new Error(
      `${source}: the nccl-tests output lists ${listed} ranks ('# Rank' lines), ` +
        `but the table is declared for ${ranks} GPUs`,
    );
  }
}

/** The nccl-tests binary that measures each op (`sendrecv_perf` for a send/receive pair). */
const PERF_BINARY: Record<NcclTestsOp, string> = {
  all_reduce: 'all_reduce_perf',
  all_gather: 'all_gather_perf',
  reduce_scatter: 'reduce_scatter_perf',
  broadcast: 'broadcast_perf',
  send_recv: 'sendrecv_perf',
  all_to_all: 'alltoall_perf',
};
const REDUCING = new Set<NcclTestsOp>(['all_reduce', 'reduce_scatter']);

/**
 * Whether the output is of the op it is declared for: the banner of newer nccl-tests names the binary
 * (`# Collective test starting: all_gather_perf`); otherwise the rows' redop column tells a reduction (`sum`, …)
 * from a collective that reduces nothing (`none`: all_gather_perf, broadcast_perf).
 */
function checkOp(lines: string[], op: NcclTestsOp, redops: readonly string[], source: string): void {
  const banner = lines.map((l) => /Collective test starting:\s*(\w+)/.exec(l)).find((m) => m);
  const declared = `this table is declared for ${op} (the output of ${PERF_BINARY[op]})`;
  if (banner && Object.values(PERF_BINARY).includes(banner[1]) && banner[1] !== PERF_BINARY[op]) {
    throw new Error(`${source}: the output is of ${banner[1]}, but ${declared}`);
  }
  const reduces = redops.find((r) => r !== 'none' && /^[a-z]+$/.test(r));
  if (!banner && REDUCING.has(op) && redops.length > 0 && redops.every((r) => r === 'none')) {
    throw new Error(
      `${source}: the rows reduce nothing (redop 'none', as all_gather_perf or broadcast_perf write), but ${declared}`,
    );
  }
  // sendrecv_perf's redop column is not documented either way: only the banner checks it.
  if (!banner && !REDUCING.has(op) && op !== 'send_recv' && reduces) {
    throw new Error(
      `${source}: the rows reduce with '${reduces}' (redop, as all_reduce_perf or reduce_scatter_perf write), ` +
        `but ${declared}`,
    );
  }
}

function parseNcclTestsText(lines: string[], op: NcclTestsOp, source: string): Point[] {
  // Newer nccl-tests print a root column after redop (-1 for all-reduce): the header says so, or, for rows
  // pasted without it, the field count (13 with root: size count type redop root, then time algbw busbw
  // #wrong out of place and in place; 12 without).
  const header = lines.find((l) => l.trimStart().startsWith('#') && /\bredop\b/.test(l));
  const out: Point[] = [];
  const redops: string[] = [];
  lines.forEach((line, i) => {
    if (isComment(line)) return;
    const f = line.trim().split(/\s+/);
    if (!/^\d+$/.test(f[0]) || !/^\d+$/.test(f[1])) return; // not a result row (banner, NCCL INFO, …)
    const hasRoot = header ? /\bredop\s+root\b/.test(header) : f.length >= 13;
    const timeIndex = 4 + (hasRoot ? 1 : 0);
    out.push(checkedPoint(Number(f[0]), Number(f[timeIndex]) * 1e3, `${source} line ${i + 1}`));
    redops.push(f[3]);
  });
  checkOp(lines, op, redops, source);
  return out;
}
