import type { FlowTable } from './flowTable.js';
import { MinHeap } from './minHeap.js';

/**
 * Max-min fair rates by progressive filling (the fluid model SimGrid uses and validated), over the
 * connected component (links ↔ flows) around the dirty links.
 *
 * Water-filling on a heap: all unfrozen flows rise at a common level t; link l saturates at
 * t_l = (capacity − rate of its frozen flows) / (its unfrozen flows), every flow counted with its
 * multiplicity (FlowTable.mult). Freezing a flow at level t ≤ t_l can only raise t_l of its other links,
 * so heap keys are kept as lower bounds and corrected when they reach the top (see fill). Rate caps are
 * one more heap entry per capped flow. Cost: O(F·path + L·log L) for F flows and L links in the component.
 *
 * Besides the rates it leaves, per link, what the incremental check (IncrementalRates) builds on: `load`,
 * the sum of its flows' rates, and `satLevel`, the level at which it saturated (the largest rate on it),
 * or -1 when it is not saturated. Those per-link arrays are public for IncrementalRates, which holds this solver
 * and the same FlowTable; nothing else writes them.
 */
export class MaxMinSolver {
  readonly load: Float64Array;
  readonly satLevel: Float64Array;
  readonly linkEpoch: Int32Array;
  readonly unfrozen: Int32Array;
  /**
   * Per link, an upper bound of its flows' rates: exact after a full solve, raised as flows join, kept as
   * flows leave (0 once none is left).
   */
  readonly maxRate: Float64Array;
  /** Per link, in an incremental fill: `maxRate` before the new flows, the fastest old flow at most. */
  readonly fastestOld: Float64Array;
  /** Incremental fill: the new flows on link l are `onTopFlows[onTopStart[l]..onTopEnd[l])`. */
  onTopFlows = new Int32Array(1024);
  readonly onTopStart: Int32Array;
  readonly onTopEnd: Int32Array;
  readonly stack: Int32Array;
  readonly heap = new MinHeap();
  epoch = 0;

  /** Rates the flows of `t` (shared with the network that owns it; FlowTable). */
  constructor(private readonly t: FlowTable) {
    const L = t.capacity.length;
    this.load = new Float64Array(L);
    this.satLevel = new Float64Array(L).fill(-1);
    this.linkEpoch = new Int32Array(L);
    this.unfrozen = new Int32Array(L);
    this.maxRate = new Float64Array(L);
    this.fastestOld = new Float64Array(L);
    this.onTopStart = new Int32Array(L);
    this.onTopEnd = new Int32Array(L);
    this.stack = new Int32Array(L);
  }

  /**
   * Solves the component(s) around the dirty links (and clears them): the flows solved are
   * `comp[0..n)`, returned n; flow f's new rate is `newRate[f]` if `frozenEpoch[f] === epoch`, else Infinity.
   */
  solveComponent(): number {
    const t = this.t;
    const epoch = ++this.epoch;
    let top = 0;
    for (let d = 0; d < t.dirtyCount; d++) {
      const l = t.dirty[d];
      t.dirtyMark[l] = 0;
      if (this.linkEpoch[l] !== epoch) {
        this.linkEpoch[l] = epoch;
        this.stack[top++] = l;
      }
    }
    t.dirtyCount = 0;
    // Every loaded link and every capped flow gets one heap entry, ordered in O(n) at the end.
    let nComp = 0;
    const heap = this.heap;
    heap.clear();
    while (top > 0) {
      const l = this.stack[--top];
      const n = t.linkCount[l];
      this.unfrozen[l] = t.linkMult[l];
      this.load[l] = 0;
      this.maxRate[l] = 0;
      this.satLevel[l] = -1;
      if (n === 0) continue;
      heap.append(t.capacity[l] / t.linkMult[l], l);
      const end = t.linkBase[l] + n;
      for (let i = t.linkBase[l]; i < end; i++) {
        const f = t.pool[i];
        if (t.flowEpoch[f] === epoch) continue;
        t.flowEpoch[f] = epoch;
        t.comp[nComp++] = f;
        if (t.rateCap[f] < Infinity) heap.append(t.rateCap[f], -(f + 1));
        const end = f * t.stride + t.routeLen[f];
        for (let k = f * t.stride; k < end; k++) {
          const l2 = t.route[k];
          if (this.linkEpoch[l2] !== epoch) {
            this.linkEpoch[l2] = epoch;
            this.stack[top++] = l2;
          }
        }
      }
    }
    heap.build();
    this.fill(nComp, epoch, false);
    return nComp;
  }

  /**
   * Progressive filling. A link's heap key is a lower bound of the level at which it saturates (its share
   * only grows as flows freeze), so freezing pushes nothing: the link on top is re-keyed to its true share,
   * and only when that is still the minimum are its unfrozen flows frozen. The heap holds one entry per
   * link, not one per (flow, link) freeze.
   *
   * With `onTop` (IncrementalRates), only the new flows (listed per link in `onTopFlows`) are filled, on
   * top of the load of the flows already rated, and a link may saturate only at a level no lower than its
   * `fastestOld`; returns false as soon as one does not, or if a flow is left unbounded. Else true.
   */
  fill(nFlows: number, epoch: number, onTop: boolean): boolean {
    const t = this.t;
    const heap = this.heap;
    let left = nFlows;
    let level = 0;
    while (left > 0 && heap.size > 0) {
      const key = heap.topKey();
      const id = heap.topId();
      if (id < 0) {
        heap.pop();
        if (t.frozenEpoch[-id - 1] !== epoch) {
          level = key;
          this.freeze(-id - 1, key, epoch);
          left--;
        }
        continue;
      }
      const n = this.unfrozen[id];
      if (n === 0) {
        heap.pop();
        continue;
      }
      const c = t.capacity[id];
      const share = c === Infinity ? Infinity : (c - this.load[id]) / n;
      if (share > key) {
        heap.raiseTop(share);
        continue;
      }
      heap.pop();
      // Mathematically share >= level; the max only absorbs rounding.
      if (share > level) level = share;
      if (onTop) {
        if (level < this.fastestOld[id] || c === Infinity) return false;
        this.satLevel[id] = level;
        const end = this.onTopEnd[id];
        for (let i = this.onTopStart[id]; i < end; i++) {
          const f = this.onTopFlows[i];
          if (t.frozenEpoch[f] !== epoch) {
            this.freeze(f, level, epoch);
            left--;
          }
        }
        continue;
      }
      if (c < Infinity) this.satLevel[id] = level;
      const end = t.linkBase[id] + t.linkCount[id];
      for (let i = t.linkBase[id]; i < end; i++) {
        const f = t.pool[i];
        if (t.frozenEpoch[f] !== epoch) {
          this.freeze(f, level, epoch);
          left--;
        }
      }
    }
    return left === 0;
  }

  /** Freezes flow f at `level`; it weighs on its links as its `mult` flows at that rate. */
  private freeze(f: number, level: number, epoch: number): void {
    const t = this.t;
    t.frozenEpoch[f] = epoch;
    t.newRate[f] = level;
    const m = t.mult[f];
    const used = m * level;
    const end = f * t.stride + t.routeLen[f];
    for (let k = f * t.stride; k < end; k++) {
      const l = t.route[k];
      this.load[l] += used;
      if (level > this.maxRate[l]) this.maxRate[l] = level;
      this.unfrozen[l] -= m;
    }
  }
}
