import { isCommunication, streamIndex } from '../program/types.js';
import type { Trace } from '../program/trace.js';

/** Where one rank's step time went, ns. compute + exposedComm + hostOptimizer + idle = step time. */
export interface RankBreakdown {
  rank: number;
  computeNs: number;
  /** Time some communication of this rank was in flight (union over its streams, and messages it waits to receive). */
  commNs: number;
  /** Communication time during which the compute stream was not computing. */
  exposedCommNs: number;
  /** Time the optimizer ran on the host (CPU offload) while neither compute nor communication ran on the GPU. */
  hostOptimizerNs: number;
  idleNs: number;
  /**
   * Idle time from the start of the step until the last forward/backward work of any rank ends: in a
   * pipeline this is the bubble (filling, draining, waiting for other stages).
   */
  windowIdleNs: number;
}

/** Merges intervals (any order, may overlap) into a sorted disjoint union. */
function union(starts: number[], ends: number[]): [number[], number[]] {
  const order = starts.map((_, i) => i).sort((a, b) => starts[a] - starts[b] || ends[a] - ends[b]);
  const s: number[] = [];
  const e: number[] = [];
  for (const i of order) {
    if (s.length > 0 && starts[i] <= e[e.length - 1]) e[e.length - 1] = Math.max(e[e.length - 1], ends[i]);
    else {
      s.push(starts[i]);
      e.push(ends[i]);
    }
  }
  return [s, e];
}

/** Length of sorted disjoint intervals a minus their overlap with sorted disjoint intervals b. */
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

/** Total length of sorted disjoint intervals clipped to [lo, hi]. */
function lengthWithin(s: number[], e: number[], lo: number, hi: number): number {
  let t = 0;
  for (let i = 0; i < s.length; i++) t += Math.max(0, Math.min(e[i], hi) - Math.max(s[i], lo));
  return t;
}

/** Per-rank breakdown of the simulated ranks, derived from the trace alone. */
// eslint-disable-next-line max-lines-per-function -- one pass over the trace per rank; debt: to split
export function rankBreakdowns(trace: Trace): RankBreakdown[] {
  const n = trace.program.rankCount;
  const cs: number[][] = Array.from({ length: n }, () => []);
  const ce: number[][] = Array.from({ length: n }, () => []);
  const ms: number[][] = Array.from({ length: n }, () => []);
  const me: number[][] = Array.from({ length: n }, () => []);
  const hs: number[][] = Array.from({ length: n }, () => []);
  const he: number[][] = Array.from({ length: n }, () => []);
  let passesEnd = 0;
  for (const t of trace.program.tasks) {
    const s = trace.startNs[t.id];
    const e = trace.endNs[t.id];
    const comm = isCommunication(t.kind);
    const onCompute = streamIndex(t.stream) === 0 && !comm;
    const passWork = t.kind === 'forward' || t.kind === 'backward' || t.kind === 'recompute';
    for (const r of t.ranks) {
      if (onCompute) {
        cs[r].push(s);
        ce[r].push(e);
        if (passWork && e > passesEnd) passesEnd = e;
        // A message another rank sends this one (a context-parallel ring step) is communication this rank waits
        // for while it is in flight, though the send's task is the sender's.
        for (const d of t.deps) {
          const dep = trace.program.tasks[d];
          if (!isCommunication(dep.kind) || dep.ranks.includes(r)) continue;
          const end = Math.min(trace.endNs[d], s);
          if (end > trace.startNs[d]) {
            ms[r].push(trace.startNs[d]);
            me[r].push(end);
          }
        }
      } else if (comm) {
        ms[r].push(s);
        me[r].push(e);
      } else if (t.kind === 'host-optimizer') {
        hs[r].push(s);
        he[r].push(e);
      }
    }
  }
  const out: RankBreakdown[] = [];
  for (const r of trace.program.simulatedRanks) {
    const [c0, c1] = union(cs[r], ce[r]);
    const [m0, m1] = union(ms[r], me[r]);
    const computeNs = lengthWithin(c0, c1, -Infinity, Infinity);
    const commNs = lengthWithin(m0, m1, -Infinity, Infinity);
    const exposedCommNs = measureOutside(m0, m1, c0, c1);
    const [x0, x1] = union([...c0, ...m0], [...c1, ...m1]);
    const [h0, h1] = union(hs[r], he[r]);
    const hostOptimizerNs = measureOutside(h0, h1, x0, x1);
    // A stage that finishes early may run its host optimizer step while others still work: busy, not bubble.
    const [b0, b1] = union([...x0, ...h0], [...x1, ...h1]);
    const windowIdleNs = Math.max(0, passesEnd - lengthWithin(b0, b1, 0, passesEnd));
    out.push({
      rank: r,
      computeNs,
      commNs,
      exposedCommNs,
      hostOptimizerNs,
      idleNs: trace.makespanNs - computeNs - exposedCommNs - hostOptimizerNs,
      windowIdleNs,
    });
  }
  return out;
}

/** Mean of each field over ranks. */
export function meanBreakdown(rows: readonly RankBreakdown[]): Omit<RankBreakdown, 'rank'> {
  const sum = { computeNs: 0, commNs: 0, exposedCommNs: 0, hostOptimizerNs: 0, idleNs: 0, windowIdleNs: 0 };
  for (const r of rows) {
    sum.computeNs += r.computeNs;
    sum.commNs += r.commNs;
    sum.exposedCommNs += r.exposedCommNs;
    sum.hostOptimizerNs += r.hostOptimizerNs;
    sum.idleNs += r.idleNs;
    sum.windowIdleNs += r.windowIdleNs;
  }
  const n = Math.max(1, rows.length);
  return {
    computeNs: sum.computeNs / n,
    commNs: sum.commNs / n,
    exposedCommNs: sum.exposedCommNs / n,
    hostOptimizerNs: sum.hostOptimizerNs / n,
    idleNs: sum.idleNs / n,
    windowIdleNs: sum.windowIdleNs / n,
  };
}
