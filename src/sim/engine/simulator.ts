import { EventQueue, type EventHandle, type EventTarget } from './eventQueue.js';

export type { EventHandle, EventTarget } from './eventQueue.js';

/** Events between two `onProgress` calls (a power of two: a mask test per event). */
export const PROGRESS_EVENTS = 1 << 14;

/**
 * The discrete-event loop. Time is an integer number of nanoseconds held in a `number`
 * (exact up to 2^53 ns, about 104 days of simulated time).
 */
export class Simulator {
  private readonly queue = new EventQueue();
  // Starts as a double (then 0) so that V8 keeps a double field: a field that starts as a small integer
  // changes the object's hidden class when times pass 2^31, throwing away optimized code mid-run.
  private nowNs = 0.5;
  private fired = 0;
  /** `untilNs` of the run in progress (Infinity outside run): no event beyond it fires in this run. */
  private runUntilNs = Infinity;
  /** Called every `PROGRESS_EVENTS` events of a run, e.g. to show progress (it must not schedule events). */
  onProgress: (() => void) | undefined = undefined;

  constructor() {
    this.nowNs = 0;
  }

  /** Current simulated time in nanoseconds. */
  get now(): number {
    return this.nowNs;
  }

  /** Number of events fired so far. */
  get eventsFired(): number {
    return this.fired;
  }

  /** Number of live events waiting. */
  get pending(): number {
    return this.queue.size;
  }

  /** Schedules `target.onEvent(arg)` after `delayNs` (rounded up to a whole nanosecond, never negative). */
  schedule(delayNs: number, target: EventTarget, arg = 0): EventHandle {
    const d = delayNs > 0 ? Math.ceil(delayNs) : 0;
    return this.queue.push(this.nowNs + d, target, arg);
  }

  /** Schedules at an absolute time; a time in the past is clamped to now. */
  at(timeNs: number, target: EventTarget, arg = 0): EventHandle {
    const t = timeNs > this.nowNs ? Math.ceil(timeNs) : this.nowNs;
    return this.queue.push(t, target, arg);
  }

  /**
   * Time of the earliest pending event, or the end of the run in progress if that is sooner; Infinity when
   * neither. Nothing else happens before it, which lets a component skip ahead over work it knows is
   * undisturbed (CollectiveRun's identical repetitions).
   */
  nextEventTimeNs(): number {
    const t = this.queue.peekTimeNs();
    return t < this.runUntilNs ? t : this.runUntilNs;
  }

  cancel(handle: EventHandle): void {
    this.queue.cancel(handle);
  }

  /** Runs events until none is left, or until the next one is later than `untilNs`. Returns the final time. */
  run(untilNs = Infinity): number {
    const q = this.queue;
    this.runUntilNs = untilNs;
    for (;;) {
      const target = q.popUntil(untilNs);
      if (target === null) break;
      this.nowNs = q.lastPoppedTimeNs;
      this.fired++;
      target.onEvent(q.lastPoppedArg);
      if ((this.fired & (PROGRESS_EVENTS - 1)) === 0 && this.onProgress !== undefined) this.onProgress();
    }
    this.runUntilNs = Infinity;
    return this.nowNs;
  }
}
