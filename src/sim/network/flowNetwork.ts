import type { EventTarget, Simulator } from '../engine/simulator.js';
import type { FlowListener } from './types.js';
import { FREE, INSTANT, ON_LINKS, SLOT_LIMIT } from './flowTable.js';
import { IncrementalRates } from './incrementalRates.js';
import { FlowTable } from './flowTable.js';
import { MaxMinSolver } from './maxMinSolver.js';

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
export class FlowNetwork implements EventTarget {
  private readonly sim: Simulator;
  /** The flows and links (shared with the two below), the max-min solver, and the incremental check beside it. */
  private readonly t: FlowTable;
  private readonly solver: MaxMinSolver;
  private readonly rates: IncrementalRates;
  private solvePending = false;
  private solves = 0;
  private fullSolves = 0;
  private started = 0;
  /** The incremental-rates shortcut (shortcuts.ts): off, every change re-solves its component. */
  private readonly incremental: boolean;

  /** `linkBandwidthGBps[l]` is link l's capacity in GB/s, which is bytes per ns. */
  constructor(sim: Simulator, linkBandwidthGBps: ArrayLike<number>, options: { incrementalRates?: boolean } = {}) {
    this.sim = sim;
    this.t = new FlowTable(linkBandwidthGBps);
    this.solver = new MaxMinSolver(this.t);
    this.rates = new IncrementalRates(this.t, this.solver);
    this.incremental = options.incrementalRates !== false;
  }

  /** Flows started and not yet reported done (a flow of multiplicity m counts once). */
  get activeFlowCount(): number {
    return this.t.active;
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
  /* eslint-disable-next-line max-params -- called once per task or flow on the hot path; positional, with no object
     per call, until npm run bench shows an options object costs nothing */
  startFlow(
    links: Int32Array,
    bytes: number,
    listener: FlowListener,
    tag: number,
    rateCapGBps = Infinity,
    multiplicity = 1,
  ): number {
    const t = this.t;
    if (!(bytes >= 0) || !Number.isFinite(bytes))
      throw new RangeError(`flow bytes must be finite and >= 0, got ${bytes}`);
    if (!(rateCapGBps > 0)) throw new RangeError(`flow rate cap must be > 0, got ${rateCapGBps}`);
    if (!Number.isInteger(multiplicity) || multiplicity < 1 || multiplicity > 0x7fffffff)
      throw new RangeError(`flow multiplicity must be an integer >= 1, got ${multiplicity}`);
    const f = t.allocSlot();
    t.gen[f]++;
    t.mult[f] = multiplicity;
    t.listeners[f] = listener;
    t.tag[f] = tag;
    t.active++;
    this.started++;
    if (links.length === 0 || bytes === 0) {
      t.state[f] = INSTANT;
      t.handle[f] = this.sim.schedule(0, this, f);
      return t.gen[f] * SLOT_LIMIT + f;
    }
    t.state[f] = ON_LINKS;
    t.size[f] = t.remaining[f] = bytes;
    t.rate[f] = 0;
    t.rateCap[f] = rateCapGBps;
    t.lastNs[f] = this.sim.now;
    t.handle[f] = -1;
    t.attach(f, links);
    this.rates.noteJoin(f);
    this.requestSolve();
    return t.gen[f] * SLOT_LIMIT + f;
  }

  /** Current rate of a flow in GB/s (bytes/ns); 0 once it is done or before its first solve. */
  rateOf(flowId: number): number {
    const t = this.t;
    const f = flowId % SLOT_LIMIT;
    if (f >= t.slotsUsed || t.gen[f] !== Math.floor(flowId / SLOT_LIMIT) || t.state[f] !== ON_LINKS) return 0;
    return t.rate[f];
  }

  /** Total bytes that have crossed link `linkId` up to now, including the in-flight share of active flows. */
  bytesDelivered(linkId: number): number {
    const t = this.t;
    let total = t.delivered[linkId];
    const now = this.sim.now;
    const end = t.linkBase[linkId] + t.linkCount[linkId];
    for (let i = t.linkBase[linkId]; i < end; i++) {
      const f = t.pool[i];
      if (now > t.lastNs[f]) total += t.mult[f] * Math.min(t.remaining[f], t.rate[f] * (now - t.lastNs[f]));
    }
    return total;
  }

  /**
   * Counts `bytes` as delivered on every link of `links`, as a flow that started and finished would have,
   * for traffic accounted without simulating it (CollectiveRun's skipped identical repetitions).
   */
  creditBytes(links: Int32Array, bytes: number): void {
    const delivered = this.t.delivered;
    for (let k = 0; k < links.length; k++) delivered[links[k]] += bytes;
  }

  /** Engine callback: `arg` is a flow slot (completion) or SOLVE. */
  onEvent(arg: number): void {
    if (arg === SOLVE) this.solve();
    else this.complete(arg);
  }

  private complete(f: number): void {
    const t = this.t;
    const st = t.state[f];
    if (st === FREE) return;
    t.handle[f] = -1;
    if (st === ON_LINKS) {
      const now = this.sim.now;
      const r = t.rate[f];
      const left = r === Infinity ? 0 : t.remaining[f] - r * (now - t.lastNs[f]);
      if (left > DONE_FRACTION * t.size[f]) {
        // Float drift left a sliver: deliver what was sent and re-arm.
        this.advance(f, now);
        if (t.rate[f] > 0) t.handle[f] = this.sim.schedule(t.remaining[f] / t.rate[f], this, f);
        return;
      }
      this.detach(f);
    }
    const listener = t.listeners[f] as FlowListener;
    const tag = t.tag[f];
    t.release(f);
    listener.onFlowDone(tag);
  }

  /** Delivers a finished flow's last bytes and takes it off its links. */
  private detach(f: number): void {
    const t = this.t;
    this.rates.noteLeave(f, t.remaining[f]);
    t.unlink(f);
    t.remaining[f] = 0;
    this.requestSolve();
  }

  /** Brings a flow's remaining bytes (and its links' delivered bytes) up to `now` at its current rate. */
  private advance(f: number, now: number): void {
    const t = this.t;
    const dt = now - t.lastNs[f];
    if (dt > 0 && t.rate[f] > 0) {
      const d = Math.min(t.remaining[f], t.rate[f] * dt);
      t.remaining[f] -= d;
      const onLinks = t.mult[f] * d;
      const end = f * t.stride + t.routeLen[f];
      for (let i = f * t.stride; i < end; i++) t.delivered[t.route[i]] += onLinks;
    }
    t.lastNs[f] = now;
  }

  private requestSolve(): void {
    if (!this.solvePending) {
      this.solvePending = true;
      this.sim.schedule(0, this, SOLVE);
    }
  }

  private solve(): void {
    const t = this.t;
    const rates = this.rates;
    this.solvePending = false;
    this.solves++;
    if (this.incremental && rates.tryIncremental()) {
      t.clearDirty();
      for (let j = 0; j < t.joinedCount; j++) {
        const f = t.joined[j];
        t.handle[f] = this.sim.schedule(t.remaining[f] / t.rate[f], this, f);
      }
      rates.endRound();
      return;
    }
    this.fullSolves++;
    const nComp = this.solver.solveComponent();
    const epoch = this.solver.epoch;
    const now = this.sim.now;
    // New rates and completion times; a flow whose rate did not change keeps its event, and its remaining
    // bytes are brought up to date only when its rate changes (they are exact either way).
    for (let k = 0; k < nComp; k++) {
      const f = t.comp[k];
      const r = t.frozenEpoch[f] === epoch ? t.newRate[f] : Infinity;
      if (r === t.rate[f] && t.handle[f] >= 0) continue;
      if (t.handle[f] >= 0) this.sim.cancel(t.handle[f]);
      this.advance(f, now);
      t.rate[f] = r;
      t.handle[f] = r > 0 ? this.sim.schedule(r === Infinity ? 0 : t.remaining[f] / r, this, f) : -1;
    }
    rates.endRound();
  }
}
