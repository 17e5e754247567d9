import type { Simulator, EventTarget } from '../engine/simulator.js';
import type { FlowListener } from '../network/types.js';
import type { Phase } from './types.js';

/** What the flow layer must offer a running collective (FlowNetwork implements it). */
export interface FlowStarter {
  startFlow(links: Int32Array, bytes: number, listener: FlowListener, tag: number, rateCapGBps?: number): number;
}

export interface CollectiveListener {
  onCollectiveDone(tag: number): void;
}

/**
 * Runs the phases of one collective on the shared network: each phase waits its latency, then
 * starts its flows; when the last flow of the last repetition of the last phase is done, the
 * listener is told.
 */
export class CollectiveRun implements EventTarget, FlowListener {
  private phase = 0;
  private rep = 0;
  private outstanding = 0;

  constructor(
    private readonly sim: Simulator,
    private readonly net: FlowStarter,
    private readonly phases: Phase[],
    private readonly bytes: number,
    private readonly listener: CollectiveListener,
    private readonly tag: number,
  ) {}

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
    this.outstanding = p.routes.length;
    if (this.outstanding === 0) {
      this.advance();
      return;
    }
    for (let i = 0; i < p.routes.length; i++) {
      this.net.startFlow(p.routes[i], p.byteFraction[i] * this.bytes, this, 0, p.rateCapGBps);
    }
  }

  onFlowDone(): void {
    if (--this.outstanding === 0) this.advance();
  }

  private advance(): void {
    if (++this.rep < this.phases[this.phase].repeat) {
      this.sim.schedule(this.phases[this.phase].latencyNs, this, 0);
      return;
    }
    this.rep = 0;
    if (++this.phase < this.phases.length) {
      this.sim.schedule(this.phases[this.phase].latencyNs, this, 0);
      return;
    }
    this.listener.onCollectiveDone(this.tag);
  }
}
