import type { EventTarget, Simulator } from '../engine/simulator.js';
import type { FlowListener } from './types.js';
import { FREE, INSTANT, ON_LINKS, SLOT_LIMIT } from './flowTable.js';
import { IncrementalRates } from './incrementalRates.js';

/** A flow with less than this fraction of its bytes left counts as done (guards float drift). */
const DONE_FRACTION = 1e-6;
const SOLVE = -1;

/**
 * Fluid (flow-level) network: active flows share link bandwidth max-min fairly, by progressive filling, the
 * model SimGrid uses and validated (maxMinSolver.ts). Rates are recomputed only for the connected component
 * (links ↔ flows) around flows that started or ended, and all changes made at one simulated instant are
 * solved once, by a single solve event scheduled at the current time. Changes that provably leave every
 * other rate as it is skip even that (incrementalRates.ts).
 */
export class FlowNetwork extends IncrementalRates implements EventTarget {
  private readonly sim: Simulator;
  private solvePending = false;
  private solves = 0;
  private fullSolves = 0;
  private started = 0;

  /** `linkBandwidthGBps[l]` is link l's capacity in GB/s, which is bytes per ns. */
  constructor(sim: Simulator, linkBandwidthGBps: ArrayLike<number>) {
    super(linkBandwidthGBps);
    this.sim = sim;
  }

  /** Flows started and not yet reported done (a flow of multiplicity m counts once). */
  get activeFlowCount(): number {
    return this.active;
  }

  /** Flows started since the network was made (a flow of multiplicity m counts once). */
  get flowsStarted(): number {
    return this.started;
  }

  /** Number of rate solves run so far (changes at one instant share one solve). */
  get solveCount(): number {
    return this.solves;
  }

  /** Solves that had to re-solve a whole component (the rest rated only the flows that started). */
  get fullSolveCount(): number {
    return this.fullSolves;
  }

  /**
   * Starts a flow of `bytes` over `links` (in order; copied).
   * `listener.onFlowDone(tag)` is called from an engine event when the last byte is delivered (integer ns,
   * rounded up); an empty route or 0 bytes completes at the current time, still through an event.
   * `multiplicity` m > 1 starts m identical flows (same route, bytes and cap, starting now) as one: max-min
   * fairness gives them one rate and one finish time, so they cost one flow to solve, weigh m times on each
   * link, deliver m × `bytes`, and call the listener once. `rateOf` is then the rate of each of them.
   * Returns the flow id.
   */
  // eslint-disable-next-line max-params -- called once per task or flow on the hot path; positional, with no object per call, until npm run bench shows an options object costs nothing
  startFlow(
    links: Int32Array,
    bytes: number,
    listener: FlowListener,
    tag: number,
    rateCapGBps = Infinity,
    multiplicity = 1,
  ): number {
    if (!(bytes >= 0) || !Number.isFinite(bytes))
      throw new RangeError(`flow bytes must be finite and >= 0, got ${bytes}`);
    if (!(rateCapGBps > 0)) throw new RangeError(`flow rate cap must be > 0, got ${rateCapGBps}`);
    if (!Number.isInteger(multiplicity) || multiplicity < 1 || multiplicity > 0x7fffffff)
      throw new RangeError(`flow multiplicity must be an integer >= 1, got ${multiplicity}`);
    const f = this.allocSlot();
    this.gen[f]++;
    this.mult[f] = multiplicity;
    this.listeners[f] = listener;
    this.tag[f] = tag;
    this.active++;
    this.started++;
    if (links.length === 0 || bytes === 0) {
      this.state[f] = INSTANT;
      this.handle[f] = this.sim.schedule(0, this, f);
      return this.gen[f] * SLOT_LIMIT + f;
    }
    this.state[f] = ON_LINKS;
    this.size[f] = this.remaining[f] = bytes;
    this.rate[f] = 0;
    this.rateCap[f] = rateCapGBps;
    this.lastNs[f] = this.sim.now;
    this.handle[f] = -1;
    this.attach(f, links);
    this.noteJoin(f);
    this.requestSolve();
    return this.gen[f] * SLOT_LIMIT + f;
  }

  /** Current rate of a flow in GB/s (bytes/ns); 0 once it is done or before its first solve. */
  rateOf(flowId: number): number {
    const f = flowId % SLOT_LIMIT;
    if (f >= this.slotsUsed || this.gen[f] !== Math.floor(flowId / SLOT_LIMIT) || this.state[f] !== ON_LINKS) return 0;
    return this.rate[f];
  }

  /** Total bytes that have crossed link `linkId` up to now, including the in-flight share of active flows. */
  bytesDelivered(linkId: number): number {
    let total = this.delivered[linkId];
    const now = this.sim.now;
    const end = this.linkBase[linkId] + this.linkCount[linkId];
    for (let i = this.linkBase[linkId]; i < end; i++) {
      const f = this.pool[i];
      if (now > this.lastNs[f])
        total += this.mult[f] * Math.min(this.remaining[f], this.rate[f] * (now - this.lastNs[f]));
    }
    return total;
  }

  /**
   * Counts `bytes` as delivered on every link of `links`, as a flow that started and finished would have,
   * for traffic accounted without simulating it (CollectiveRun's skipped identical repetitions).
   */
  creditBytes(links: Int32Array, bytes: number): void {
    for (let k = 0; k < links.length; k++) this.delivered[links[k]] += bytes;
  }

  /** Engine callback: `arg` is a flow slot (completion) or SOLVE. */
  onEvent(arg: number): void {
    if (arg === SOLVE) this.solve();
    else this.complete(arg);
  }

  private complete(f: number): void {
    const st = this.state[f];
    if (st === FREE) return;
    this.handle[f] = -1;
    if (st === ON_LINKS) {
      const now = this.sim.now;
      const r = this.rate[f];
      const left = r === Infinity ? 0 : this.remaining[f] - r * (now - this.lastNs[f]);
      if (left > DONE_FRACTION * this.size[f]) {
        // Float drift left a sliver: deliver what was sent and re-arm.
        this.advance(f, now);
        if (this.rate[f] > 0) this.handle[f] = this.sim.schedule(this.remaining[f] / this.rate[f], this, f);
        return;
      }
      this.detach(f);
    }
    const listener = this.listeners[f] as FlowListener;
    const tag = this.tag[f];
    this.release(f);
    listener.onFlowDone(tag);
  }

  /** Delivers a finished flow's last bytes and takes it off its links. */
  private detach(f: number): void {
    this.noteLeave(f, this.remaining[f]);
    this.unlink(f);
    this.remaining[f] = 0;
    this.requestSolve();
  }

  /** Brings a flow's remaining bytes (and its links' delivered bytes) up to `now` at its current rate. */
  private advance(f: number, now: number): void {
    const dt = now - this.lastNs[f];
    if (dt > 0 && this.rate[f] > 0) {
      const d = Math.min(this.remaining[f], this.rate[f] * dt);
      this.remaining[f] -= d;
      const onLinks = this.mult[f] * d;
      const end = f * this.stride + this.routeLen[f];
      for (let i = f * this.stride; i < end; i++) this.delivered[this.route[i]] += onLinks;
    }
    this.lastNs[f] = now;
  }

  private requestSolve(): void {
    if (!this.solvePending) {
      this.solvePending = true;
      this.sim.schedule(0, this, SOLVE);
    }
  }

  private solve(): void {
    this.solvePending = false;
    this.solves++;
    if (this.tryIncremental()) {
      this.clearDirty();
      for (let j = 0; j < this.joinedCount; j++) {
        const f = this.joined[j];
        this.handle[f] = this.sim.schedule(this.remaining[f] / this.rate[f], this, f);
      }
      this.endRound();
      return;
    }
    this.fullSolves++;
    const nComp = this.solveComponent();
    const epoch = this.epoch;
    const now = this.sim.now;
    // New rates and completion times; a flow whose rate did not change keeps its event, and its remaining
    // bytes are brought up to date only when its rate changes (they are exact either way).
    for (let k = 0; k < nComp; k++) {
      const f = this.comp[k];
      const r = this.frozenEpoch[f] === epoch ? this.newRate[f] : Infinity;
      if (r === this.rate[f] && this.handle[f] >= 0) continue;
      if (this.handle[f] >= 0) this.sim.cancel(this.handle[f]);
      this.advance(f, now);
      this.rate[f] = r;
      this.handle[f] = r > 0 ? this.sim.schedule(r === Infinity ? 0 : this.remaining[f] / r, this, f) : -1;
    }
    this.endRound();
  }
}
