import type { Simulator, EventTarget } from '../engine/simulator.js';
import type { FlowListener } from '../network/types.js';
import type { Phase } from './types.js';

/** What the flow layer must offer a running collective (FlowNetwork implements it). */
export interface FlowStarter {
  /** `multiplicity` m starts m identical flows as one, done once (see FlowNetwork.startFlow). */
  startFlow(
    links: Int32Array,
    bytes: number,
    listener: FlowListener,
    tag: number,
    rateCapGBps?: number,
    multiplicity?: number,
  ): number;
}

/** What skipping identical repetitions needs besides starting flows (FlowNetwork implements it). */
export interface RepeatableNetwork extends FlowStarter {
  /** Flows started and not yet done. */
  readonly activeFlowCount: number;
  /** Flows started since the network was made. */
  readonly flowsStarted: number;
  /** Counts `bytes` as delivered on every link of `links`, as a finished flow would have. */
  creditBytes(links: Int32Array, bytes: number): void;
}

export interface CollectiveListener {
  onCollectiveDone(tag: number): void;
}

function isRepeatable(net: FlowStarter): net is RepeatableNetwork {
  return typeof (net as Partial<RepeatableNetwork>).creditBytes === 'function';
}

/**
 * Runs the phases of one collective on the shared network: each phase waits its latency, then
 * starts its flows; when the last flow of the last repetition of the last phase is done, the
 * listener is told.
 *
 * Repetitions of a phase (the steps of a ring in step mode) are identical, and the flow model is
 * deterministic and shift-invariant: a repetition that starts on an empty network and sees no other
 * flow start takes exactly as long as the previous one that did the same. So once one repetition ran
 * alone, the next ones are skipped in a single event for as long as the engine has nothing else pending,
 * and their bytes are credited to the links. The last repetition of a phase always runs for real.
 */
export class CollectiveRun implements EventTarget, FlowListener {
  private phase = 0;
  private rep = 0;
  private outstanding = 0;
  private readonly repeatable?: RepeatableNetwork;
  /** Start time of the running repetition. */
  private repStartNs = 0;
  /**
   * `flowsStarted` just after this repetition started its flows on an empty network (unchanged at its end
   * if none joined); -1 when it did not start alone.
   */
  private startedMark = -1;
  /** Duration of the last repetition of this phase that ran alone, in ns; -1 when there is none. */
  private aloneRepNs = -1;

  /* eslint-disable-next-line max-params -- the run of one collective on the engine: the service wires these once per
   * call; an input object is the next step (issue 22 part 4) */
  constructor(
    private readonly sim: Simulator,
    private readonly net: FlowStarter,
    private readonly phases: Phase[],
    private readonly bytes: number,
    private readonly listener: CollectiveListener,
    private readonly tag: number,
    /** Skip identical repetitions (exact; off only to measure or check the step-by-step path). */
    skipRepeats = true,
  ) {
    if (skipRepeats && isRepeatable(net)) this.repeatable = net;
  }

  start(): void {
    if (this.phases.length === 0) {
      this.sim.schedule(0, this, 1);
      return;
    }
    this.sim.schedule(this.phases[0].latencyNs, this, 0);
  }

  /** arg 0: a phase's latency has passed; arg 1: an empty collective is done. */
  onEvent(arg: number): void {
    if (arg === 1) {
      this.listener.onCollectiveDone(this.tag);
      return;
    }
    const p = this.phases[this.phase];
    // One per entry: an entry of count m runs as one flow of multiplicity m, done once.
    this.outstanding = p.routes.length;
    if (this.outstanding === 0) {
      this.advance();
      return;
    }
    const net = this.repeatable;
    const alone = net !== undefined && net.activeFlowCount === 0;
    if (alone && this.aloneRepNs >= 0 && this.skip(net, p)) return;
    this.repStartNs = this.sim.now;
    for (let i = 0; i < p.routes.length; i++) {
      this.net.startFlow(p.routes[i], p.byteFraction[i] * this.bytes, this, 0, p.rateCapGBps, p.count[i]);
    }
    if (net !== undefined) this.startedMark = alone ? net.flowsStarted : -1;
  }

  onFlowDone(): void {
    if (--this.outstanding > 0) return;
    const net = this.repeatable;
    this.aloneRepNs = net !== undefined && net.flowsStarted === this.startedMark ? this.sim.now - this.repStartNs : -1;
    this.advance();
  }

  /**
   * Skips as many repetitions (this one included, the phase's last excluded) as end before the engine's
   * next pending event: nothing can disturb them, so each takes `aloneRepNs` plus the latency wait, as
   * the one measured did. Returns false when not even one can be skipped.
   */
  private skip(net: RepeatableNetwork, p: Phase): boolean {
    const left = p.repeat - this.rep - 1;
    if (left <= 0) return false;
    // The wait between repetitions is scheduled with the latency rounded up to whole ns.
    const periodNs = this.aloneRepNs + (p.latencyNs > 0 ? Math.ceil(p.latencyNs) : 0);
    const quietNs = this.sim.nextEventTimeNs() - this.sim.now;
    let k = left;
    if (periodNs > 0) {
      if (quietNs < k * periodNs) k = Math.floor(quietNs / periodNs);
    } else if (quietNs <= 0) {
      k = 0;
    }
    if (k <= 0) return false;
    for (let i = 0; i < p.routes.length; i++)
      net.creditBytes(p.routes[i], k * p.count[i] * p.byteFraction[i] * this.bytes);
    this.rep += k;
    this.sim.schedule(k * periodNs, this, 0);
    return true;
  }

  private advance(): void {
    if (++this.rep < this.phases[this.phase].repeat) {
      this.sim.schedule(this.phases[this.phase].latencyNs, this, 0);
      return;
    }
    this.rep = 0;
    this.aloneRepNs = -1;
    if (++this.phase < this.phases.length) {
      this.sim.schedule(this.phases[this.phase].latencyNs, this, 0);
      return;
    }
    this.listener.onCollectiveDone(this.tag);
  }
}
