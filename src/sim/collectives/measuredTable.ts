import type { CollectiveOp } from './types.js';

/**
 * A collective as measured on a real machine (nccl-tests): the time of one call, on an idle machine,
 * at several sizes, for one op over `ranks` GPUs of one node. A scenario can give such tables
 * (`comm.measured`); the collective service then times calls of that op and group size inside one
 * node by the table instead of by its own latency and bandwidth model, while the flows still share
 * the links with whatever else runs.
 */
export interface MeasuredCollectiveTable {
  op: CollectiveOp;
  ranks: number;
  /** Sorted by size, distinct sizes. */
  points: readonly { bytes: number; timeNs: number }[];
  /** Where the numbers come from (file), for messages. */
  source: string;
}

/**
 * The table's time for `bytes`: linear between measured sizes, and at the last measured algorithm
 * bandwidth beyond the largest. Below the smallest size there is nothing to interpolate: undefined
 * (the caller scales its own model to meet the table there).
 */
export function tableTimeNs(table: MeasuredCollectiveTable, bytes: number): number | undefined {
  const pts = table.points;
  if (pts.length === 0 || bytes < pts[0].bytes) return undefined;
  const last = pts[pts.length - 1];
  if (bytes >= last.bytes) return (last.timeNs * bytes) / last.bytes;
  let lo = 0;
  let hi = pts.length - 1;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (pts[mid].bytes <= bytes) lo = mid;
    else hi = mid;
  }
  const a = pts[lo];
  const b = pts[hi];
  return a.timeNs + ((b.timeNs - a.timeNs) * (bytes - a.bytes)) / (b.bytes - a.bytes);
}

/** The table for `op` over `ranks` GPUs, if one was given. */
export function findTable(
  tables: readonly MeasuredCollectiveTable[] | undefined,
  op: CollectiveOp,
  ranks: number,
): MeasuredCollectiveTable | undefined {
  return tables?.find((t) => t.op === op && t.ranks === ranks);
}
