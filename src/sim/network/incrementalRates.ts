import { MaxMinSolver } from './maxMinSolver.js';

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
export class IncrementalRates extends MaxMinSolver {
  /** Solve round: the marks below say "in the changes waiting for this round's solve". */
  protected round = 1;
  private readonly leftRound: Int32Array;
  private leftCount = 0;
  /** A flow of infinite rate left: its links' loads are unknown until the next full solve. */
  private unboundedLeft = false;

  constructor(linkBandwidthGBps: ArrayLike<number>) {
    super(linkBandwidthGBps);
    this.leftRound = new Int32Array(linkBandwidthGBps.length);
  }

  /** Records that flow f joined its links (attached already) in this round. */
  protected noteJoin(f: number): void {
    this.joined[this.joinedCount++] = f;
    this.joinRound[f] = this.round;
  }

  /**
   * Records that flow f, still on its links, is leaving them: their loads drop by its rate. Also counts
   * its last `lastBytes` as delivered on them (in the same pass over its route).
   */
  protected noteLeave(f: number, lastBytes: number): void {
    const r = this.rate[f];
    if (!(r < Infinity)) this.unboundedLeft = true;
    // A flow of multiplicity m is m flows: m times the bytes and the load.
    const m = this.mult[f];
    const bytes = m * lastBytes;
    const used = m * r;
    const end = f * this.stride + this.routeLen[f];
    for (let k = f * this.stride; k < end; k++) {
      const l = this.route[k];
      this.delivered[l] += bytes;
      this.leftRound[l] = this.round;
      this.load[l] -= used;
      // An emptied link starts afresh, so rounding in its load does not build up over a run.
      if (this.linkCount[l] === 1) this.load[l] = this.maxRate[l] = 0;
    }
    this.leftCount++;
  }

  /**
   * True when this round's changes leave every old flow's rate unchanged; the joined flows then have
   * their rates in `rate`. False means: run the full solve (which overwrites whatever this touched).
   */
  protected tryIncremental(): boolean {
    if (this.unboundedLeft) return false;
    if (this.leftCount > 0 && !this.departuresKeepRates()) return false;
    return this.joinedCount === 0 || this.rateJoined();
  }

  /** Starts the next round (after either kind of solve). */
  protected endRound(): void {
    this.round++;
    this.leftCount = 0;
    this.joinedCount = 0;
    this.unboundedLeft = false;
  }

  private departuresKeepRates(): boolean {
    const round = this.round;
    for (let d = 0; d < this.dirtyCount; d++) {
      const l = this.dirty[d];
      if (this.leftRound[l] !== round || this.satLevel[l] < 0) continue;
      const end = this.linkBase[l] + this.linkCount[l];
      for (let i = this.linkBase[l]; i < end; i++) {
        const g = this.pool[i];
        if (this.joinRound[g] !== round && !this.hasUntouchedBottleneck(g)) return false;
      }
    }
    // The links flows left now have spare capacity.
    for (let d = 0; d < this.dirtyCount; d++) {
      const l = this.dirty[d];
      if (this.leftRound[l] === round) this.satLevel[l] = -1;
    }
    return true;
  }

  /** Whether old flow g is capped or has a bottleneck no flow left this round. */
  private hasUntouchedBottleneck(g: number): boolean {
    const r = this.rate[g];
    if (r >= this.rateCap[g]) return true;
    const end = g * this.stride + this.routeLen[g];
    for (let k = g * this.stride; k < end; k++) {
      const b = this.route[k];
      if (this.leftRound[b] !== this.round && this.satLevel[b] >= 0 && r >= this.satLevel[b]) return true;
    }
    return false;
  }

  /**
   * Rates the joined flows by progressive filling on the capacity the old flows leave, the old flows held
   * frozen at their rates. Fair iff no joined flow crosses a saturated link (old bottlenecks stay as they
   * were) and each joined flow saturates a link on which no old flow is faster (or is capped).
   */
  private rateJoined(): boolean {
    const epoch = ++this.epoch;
    const heap = this.heap;
    heap.clear();
    // Count the new flows per link (checking each link has spare capacity), then list them per link:
    // `onTopEnd` first counts a link's list entries, `unfrozen` its flows with their multiplicity.
    let nLinks = 0;
    let total = 0;
    for (let j = 0; j < this.joinedCount; j++) {
      const f = this.joined[j];
      const m = this.mult[f];
      const end = f * this.stride + this.routeLen[f];
      total += this.routeLen[f];
      for (let k = f * this.stride; k < end; k++) {
        const l = this.route[k];
        if (this.linkEpoch[l] === epoch) {
          this.unfrozen[l] += m;
          this.onTopEnd[l]++;
          continue;
        }
        this.linkEpoch[l] = epoch;
        if (!(this.capacity[l] - this.load[l] > 0)) return false;
        this.stack[nLinks++] = l;
        this.unfrozen[l] = m;
        this.onTopEnd[l] = 1;
        this.fastestOld[l] = this.maxRate[l];
      }
      if (this.rateCap[f] < Infinity) heap.append(this.rateCap[f], -(f + 1));
    }
    if (this.onTopFlows.length < total) this.onTopFlows = new Int32Array(2 * total);
    let at = 0;
    for (let i = 0; i < nLinks; i++) {
      const l = this.stack[i];
      const entries = this.onTopEnd[l];
      this.onTopStart[l] = this.onTopEnd[l] = at;
      at += entries;
      heap.append((this.capacity[l] - this.load[l]) / this.unfrozen[l], l);
    }
    for (let j = 0; j < this.joinedCount; j++) {
      const f = this.joined[j];
      const end = f * this.stride + this.routeLen[f];
      for (let k = f * this.stride; k < end; k++) this.onTopFlows[this.onTopEnd[this.route[k]]++] = f;
    }
    heap.build();
    if (!this.fill(this.joinedCount, epoch, true)) return false;
    for (let j = 0; j < this.joinedCount; j++) {
      const f = this.joined[j];
      this.rate[f] = this.newRate[f];
    }
    return true;
  }
}
