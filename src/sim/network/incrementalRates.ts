import type { FlowTable } from './flowTable.js';
import type { MaxMinSolver } from './maxMinSolver.js';

/**
 * Recognises changes that leave every other flow's max-min rate as it is, so that the network can rate
 * the new flows alone instead of re-solving their whole component. In a training step most changes are
 * of this kind: a pipeline transfer starts or ends beside a long data-parallel all-reduce that is
 * bottlenecked elsewhere, and re-solving the all-reduce's thousands of flows for it was most of the cost.
 *
 * The test is the bottleneck characterisation of max-min fairness: an allocation is max-min fair iff every
 * flow is at its rate cap or crosses a saturated link on which no flow is faster (its bottleneck). Starting
 * from a fair allocation:
 *  - flows leaving free capacity only on their own links; if every remaining flow on those that were
 *    saturated has a bottleneck elsewhere, nothing else may rise and the allocation is still fair;
 *  - new flows that cross only links with spare capacity, rated by progressive filling of that spare
 *    capacity, leave every old bottleneck saturated and untouched; the allocation is fair iff each new
 *    flow has a bottleneck too: it is capped, or no old flow is faster on the link that froze it (checked
 *    against a per-link upper bound of the old rates, so that it costs nothing per old flow).
 * Either holds exactly in real arithmetic, and fair allocations are unique, so the result is the one the full
 * solve would give, up to rounding; whenever a test fails, or a link is infinite, the full solve runs.
 */
export class IncrementalRates {
  /** Solve round: the marks below say "in the changes waiting for this round's solve". */
  private round = 1;
  private readonly leftRound: Int32Array;
  private leftCount = 0;
  /** A flow of infinite rate left: its links' loads are unknown until the next full solve. */
  private unboundedLeft = false;

  /** Checks the changes to `t`'s flows against the rates `solver` left (both shared with the network). */
  constructor(
    private readonly t: FlowTable,
    private readonly solver: MaxMinSolver,
  ) {
    this.leftRound = new Int32Array(t.capacity.length);
  }

  /** Records that flow f joined its links (attached already) in this round. */
  noteJoin(f: number): void {
    const t = this.t;
    t.joined[t.joinedCount++] = f;
    t.joinRound[f] = this.round;
  }

  /**
   * Records that flow f, still on its links, is leaving them: their loads drop by its rate. Also counts
   * its last `lastBytes` as delivered on them (in the same pass over its route).
   */
  noteLeave(f: number, lastBytes: number): void {
    const t = this.t;
    const sv = this.solver;
    const r = t.rate[f];
    if (!(r < Infinity)) this.unboundedLeft = true;
    // A flow of multiplicity m is m flows: m times the bytes and the load.
    const m = t.mult[f];
    const bytes = m * lastBytes;
    const used = m * r;
    const end = f * t.stride + t.routeLen[f];
    for (let k = f * t.stride; k < end; k++) {
      const l = t.route[k];
      t.delivered[l] += bytes;
      this.leftRound[l] = this.round;
      sv.load[l] -= used;
      // An emptied link starts afresh, so rounding in its load does not build up over a run.
      if (t.linkCount[l] === 1) sv.load[l] = sv.maxRate[l] = 0;
    }
    this.leftCount++;
  }

  /**
   * True when this round's changes leave every old flow's rate unchanged; the joined flows then have
   * their rates in `rate`. False means: run the full solve (which overwrites whatever this touched).
   */
  tryIncremental(): boolean {
    const t = this.t;
    if (this.unboundedLeft) return false;
    if (this.leftCount > 0 && !this.departuresKeepRates()) return false;
    return t.joinedCount === 0 || this.rateJoined();
  }

  /** Starts the next round (after either kind of solve). */
  endRound(): void {
    const t = this.t;
    this.round++;
    this.leftCount = 0;
    t.joinedCount = 0;
    this.unboundedLeft = false;
  }

  private departuresKeepRates(): boolean {
    const t = this.t;
    const sv = this.solver;
    const round = this.round;
    for (let d = 0; d < t.dirtyCount; d++) {
      const l = t.dirty[d];
      if (this.leftRound[l] !== round || sv.satLevel[l] < 0) continue;
      const end = t.linkBase[l] + t.linkCount[l];
      for (let i = t.linkBase[l]; i < end; i++) {
        const g = t.pool[i];
        if (t.joinRound[g] !== round && !this.hasUntouchedBottleneck(g)) return false;
      }
    }
    // The links flows left now have spare capacity.
    for (let d = 0; d < t.dirtyCount; d++) {
      const l = t.dirty[d];
      if (this.leftRound[l] === round) sv.satLevel[l] = -1;
    }
    return true;
  }

  /** Whether old flow g is capped or has a bottleneck no flow left this round. */
  private hasUntouchedBottleneck(g: number): boolean {
    const t = this.t;
    const sv = this.solver;
    const r = t.rate[g];
    if (r >= t.rateCap[g]) return true;
    const end = g * t.stride + t.routeLen[g];
    for (let k = g * t.stride; k < end; k++) {
      const b = t.route[k];
      if (this.leftRound[b] !== this.round && sv.satLevel[b] >= 0 && r >= sv.satLevel[b]) return true;
    }
    return false;
  }

  /**
   * Rates the joined flows by progressive filling on the capacity the old flows leave, the old flows held
   * frozen at their rates. Fair iff no joined flow crosses a saturated link (old bottlenecks stay as they
   * were) and each joined flow saturates a link on which no old flow is faster (or is capped).
   */
  private rateJoined(): boolean {
    const t = this.t;
    const sv = this.solver;
    const epoch = ++sv.epoch;
    const heap = sv.heap;
    heap.clear();
    // Count the new flows per link (checking each link has spare capacity), then list them per link:
    // `onTopEnd` first counts a link's list entries, `unfrozen` its flows with their multiplicity.
    let nLinks = 0;
    let total = 0;
    for (let j = 0; j < t.joinedCount; j++) {
      const f = t.joined[j];
      const m = t.mult[f];
      const end = f * t.stride + t.routeLen[f];
      total += t.routeLen[f];
      for (let k = f * t.stride; k < end; k++) {
        const l = t.route[k];
        if (sv.linkEpoch[l] === epoch) {
          sv.unfrozen[l] += m;
          sv.onTopEnd[l]++;
          continue;
        }
        sv.linkEpoch[l] = epoch;
        if (!(t.capacity[l] - sv.load[l] > 0)) return false;
        sv.stack[nLinks++] = l;
        sv.unfrozen[l] = m;
        sv.onTopEnd[l] = 1;
        sv.fastestOld[l] = sv.maxRate[l];
      }
      if (t.rateCap[f] < Infinity) heap.append(t.rateCap[f], -(f + 1));
    }
    if (sv.onTopFlows.length < total) sv.onTopFlows = new Int32Array(2 * total);
    let at = 0;
    for (let i = 0; i < nLinks; i++) {
      const l = sv.stack[i];
      const entries = sv.onTopEnd[l];
      sv.onTopStart[l] = sv.onTopEnd[l] = at;
      at += entries;
      heap.append((t.capacity[l] - sv.load[l]) / sv.unfrozen[l], l);
    }
    for (let j = 0; j < t.joinedCount; j++) {
      const f = t.joined[j];
      const end = f * t.stride + t.routeLen[f];
      for (let k = f * t.stride; k < end; k++) sv.onTopFlows[sv.onTopEnd[t.route[k]]++] = f;
    }
    heap.build();
    if (!sv.fill(t.joinedCount, epoch, true)) return false;
    for (let j = 0; j < t.joinedCount; j++) {
      const f = t.joined[j];
      t.rate[f] = t.newRate[f];
    }
    return true;
  }
}
