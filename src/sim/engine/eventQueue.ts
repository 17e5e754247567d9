/**
 * Priority queue of timed events for the discrete-event engine: a ladder queue (see ladderBase.ts), which
 * files and pops an event in O(1) amortised time, where a heap takes O(log n).
 *
 * Events pop in (timeNs, insertion sequence) order: two events at the same time pop in the order they
 * were pushed, which makes every run deterministic. Event data lives in typed arrays indexed by slot, so
 * push and pop allocate nothing. Cancellation is lazy: a cancelled event keeps its place and is dropped
 * when it reaches the front. A handle carries its slot's generation, so cancelling an event that already
 * fired is a no-op even after its slot is reused.
 *
 * This class holds only the hot paths (filing into the top or rung 0, popping the bottom's front), kept
 * small so that V8 inlines them into Simulator; everything else is in LadderBase.
 */

import { L, type EventTarget } from './bottom.js';
import { LadderBase } from './ladderBase.js';

export type { EventTarget } from './bottom.js';

/** Opaque handle for cancelling one scheduled event. */
export type EventHandle = number;

export class EventQueue extends LadderBase {
  constructor(initialCapacity = 1024) {
    super(initialCapacity);
  }

  /** Number of scheduled events that are not cancelled. */
  get size(): number {
    return this.liveCount;
  }

  /** Time of the event most recently popped. */
  get lastPoppedTimeNs(): number {
    return this.poppedTimeNs;
  }

  /** `arg` of the event most recently popped. */
  get lastPoppedArg(): number {
    return this.poppedArg;
  }

  /** Schedules `target.onEvent(arg)` at absolute time `timeNs` (integer nanoseconds). */
  push(timeNs: number, target: EventTarget, arg = 0): EventHandle {
    if (this.freeCount === 0) this.addSlots();
    const slot = this.freeSlots[--this.freeCount];
    const rec = this.rec;
    const k = L.REC * slot;
    rec[k] = timeNs;
    rec[k + 1] = arg;
    this.target[slot] = target;
    this.liveCount++;
    if (timeNs >= this.topStart) {
      if (timeNs > this.topMax) {
        if (timeNs >= L.FAR) return this.pushFar(slot); // not an exact integer: kept apart, sorted
        this.topMax = timeNs;
      }
      const n = 2 * this.topCount++;
      this.top[n] = timeNs;
      this.top[n + 1] = slot;
      if (timeNs < this.topMin) this.topMin = timeNs;
    } else if (timeNs >= this.r0Lo) {
      // Rung 0, whose buckets start the pool: the common case below the top (see Bottom.addToBucket).
      const pool = this.pool;
      const i = L.W * (((timeNs - this.r0Start) * this.r0Inv) | 0); // in [0, buckets): `| 0` floors
      const c = pool[i]++;
      if (c < L.INLINE) {
        pool[i + 2 + c] = slot;
      } else {
        this.reci[2 * k + L.NEXT] = pool[i + 1];
        pool[i + 1] = slot;
      }
    } else {
      this.insertBelowTop(slot);
    }
    return rec[k + 2] * L.SLOT_LIMIT + slot;
  }

  /** Marks an event cancelled; it is dropped when it reaches the front. Cancelling a fired event is a no-op. */
  cancel(handle: EventHandle): void {
    const slot = handle % L.SLOT_LIMIT;
    const g = (handle - slot) / L.SLOT_LIMIT;
    if (slot >= 0 && slot < this.capacity && this.rec[L.REC * slot + 2] === g && this.target[slot] !== null) {
      this.target[slot] = null;
      this.liveCount--;
    }
  }

  /** Time of the next live event, or Infinity when none is left. */
  peekTimeNs(): number {
    return this.front() ? this.bTime[this.bHead] : Infinity;
  }

  /**
   * Removes the next live event if it is no later than `untilNs` and returns its target, with its time and
   * arg in `lastPoppedTimeNs` and `lastPoppedArg`; returns null when there is none.
   */
  popUntil(untilNs: number): EventTarget | null {
    let h = this.bHead;
    if (h === this.bEnd || this.target[this.bSlot[h]] === null) {
      if (!this.front()) return null;
      h = this.bHead;
    }
    const t = this.bTime[h];
    if (t > untilNs) return null;
    const slot = this.bSlot[h];
    this.bHead = h + 1;
    this.liveCount--;
    this.poppedTimeNs = t;
    const rec = this.rec;
    const k = L.REC * slot;
    this.poppedArg = rec[k + 1];
    const target = this.target[slot];
    // Free the slot (as freeSlot does).
    this.target[slot] = null;
    const g = rec[k + 2];
    rec[k + 2] = g < 0x7fffffff ? g + 1 : 0;
    this.freeSlots[this.freeCount++] = slot;
    return target;
  }
}
