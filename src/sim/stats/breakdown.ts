import { isCommunication, streamIndex } from '../program/types.js';
import type { Trace } from '../program/trace.js';

/** Where one rank's step time went, ns. compute + exposedComm + idle = step time. */
export interface RankBreakdown {
  rank: number;
  computeNs: number;
  /** Communication busy time (comm stream), overlapped or not. */
  commNs: number;
  /** Communication time during which the compute stream was idle. */
  exposedCommNs: number;
  idleNs: number;
}

/** Length of the union of sorted, non-overlapping interval list a minus its overlap with list b. */
function measureOutside(aStart: number[], aEnd: number[], bStart: number[], bEnd: number[]): number {
  let total = 0;
  let j = 0;
  for (let i = 0; i < aStart.length; i++) {
    let s = aStart[i];
    const e = aEnd[i];
    while (j < bStart.length && bEnd[j] <= s) j++;
    let k = j;
    while (s < e) {
      if (k >= bStart.length || bStart[k] >= e) {
        total += e - s;
        break;
      }
      if (bStart[k] > s) total += bStart[k] - s;
      s = Math.max(s, bEnd[k]);
      k++;
    }
  }
  return total;
}

/**
 * Per-rank breakdown derived from the trace alone. Streams run their tasks in order, so each stream's
 * spans are already sorted and disjoint.
 */
export function rankBreakdowns(trace: Trace): RankBreakdown[] {
  const n = trace.program.rankCount;
  const cs: number[][] = Array.from({ length: n }, () => []);
  const ce: number[][] = Array.from({ length: n }, () => []);
  const ms: number[][] = Array.from({ length: n }, () => []);
  const me: number[][] = Array.from({ length: n }, () => []);
  for (const t of trace.program.tasks) {
    const s = trace.startNs[t.id];
    const e = trace.endNs[t.id];
    const onCompute = streamIndex(t.stream) === 0;
    const comm = isCommunication(t.kind);
    for (const r of t.ranks) {
      if (onCompute && !comm) {
        cs[r].push(s);
        ce[r].push(e);
      } else if (comm) {
        ms[r].push(s);
        me[r].push(e);
      }
    }
  }
  const out: RankBreakdown[] = [];
  for (let r = 0; r < n; r++) {
    let computeNs = 0;
    for (let i = 0; i < cs[r].length; i++) computeNs += ce[r][i] - cs[r][i];
    let commNs = 0;
    for (let i = 0; i < ms[r].length; i++) commNs += me[r][i] - ms[r][i];
    const exposedCommNs = measureOutside(ms[r], me[r], cs[r], ce[r]);
    out.push({ rank: r, computeNs, commNs, exposedCommNs, idleNs: trace.makespanNs - computeNs - exposedCommNs });
  }
  return out;
}

/** Mean of each field over ranks. */
export function meanBreakdown(rows: readonly RankBreakdown[]): Omit<RankBreakdown, 'rank'> {
  const sum = { computeNs: 0, commNs: 0, exposedCommNs: 0, idleNs: 0 };
  for (const r of rows) {
    sum.computeNs += r.computeNs;
    sum.commNs += r.commNs;
    sum.exposedCommNs += r.exposedCommNs;
    sum.idleNs += r.idleNs;
  }
  const n = Math.max(1, rows.length);
  return { computeNs: sum.computeNs / n, commNs: sum.commNs / n, exposedCommNs: sum.exposedCommNs / n, idleNs: sum.idleNs / n };
}
