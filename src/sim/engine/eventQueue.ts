/**
 * Priority queue of timed events for the discrete-event engine: a ladder queue (see ladder.ts), which
 * files and pops an event in O(1) amortised time, where a heap takes O(log n).
 *
 * Events pop in (timeNs, insertion sequence) order: two events at the same time pop in the order they
 * were pushed, which makes every run deterministic. Event data lives in typed arrays indexed by slot, so
 * push and pop allocate nothing. Cancellation is lazy: a cancelled event keeps its place and is dropped
 * when it reaches the front. A handle carries its slot's generation, so cancelling an event that already
 * fired is a no-op even after its slot is reused.
 *
 * This class holds only the hot paths (filing into the top or rung 0, popping the bottom's front), kept
 * small so that V8 inlines them into Simulator; it is made of two components sharing one Bottom (bottom.ts: slots,
 * pool, bottom, far list), the Ladder (ladder.ts: top, rungs and the slow paths) holding it too.
 */

import { Bottom, L, type EventTarget } from './bottom.js';
import { Ladder } from './ladder.js';

export type { EventTarget } from './bottom.js';

/** Opaque handle for cancelling one scheduled event. */
export type EventHandle = number;

export class EventQueue {
  /** The slots and the sorted bottom, and the ladder above them (sharing the same Bottom). */
  private readonly s: Bottom;
  private readonly ladder: Ladder;

  constructor(initialCapacity = 1024) {
    this.s = new Bottom();
    this.ladder = new Ladder(this.s);
    this.grow(Math.max(16, initialCapacity));
  }

  /** Grows the slot arrays to `cap` slots (double when called with no argument) and the ladder's top with them. */
  private grow(cap = 2 * this.s.capacity): void {
    this.s.addSlots(cap);
    this.ladder.growTop(cap);
  }

  /** Number of scheduled events that are not cancelled. */
  get size(): number {
    return this.s.liveCount;
  }

  /** Time of the event most recently popped. */
  get lastPoppedTimeNs(): number {
    return this.s.poppedTimeNs;
  }

  /** `arg` of the event most recently popped. */
  get lastPoppedArg(): number {
    return this.s.poppedArg;
  }

  /** Schedules `target.onEvent(arg)` at absolute time `timeNs` (integer nanoseconds). */
  push(timeNs: number, target: EventTarget, arg = 0): EventHandle {
    const s = this.s;
    const ld = this.ladder;
    if (s.freeCount === 0) this.grow();
    const slot = s.freeSlots[--s.freeCount];
    const rec = s.rec;
    const k = L.REC * slot;
    rec[k] = timeNs;
    rec[k + 1] = arg;
    s.target[slot] = target;
    s.liveCount++;
    if (timeNs >= ld.topStart) {
      if (timeNs > ld.topMax) {
        if (timeNs >= L.FAR) return s.pushFar(slot); // not an exact integer: kept apart, sorted
        ld.topMax = timeNs;
      }
      const n = 2 * ld.topCount++;
      ld.top[n] = timeNs;
      ld.top[n + 1] = slot;
      if (timeNs < ld.topMin) ld.topMin = timeNs;
    } else if (timeNs >= ld.r0Lo) {
      // Rung 0, whose buckets start the pool: the common case below the top (see Bottom.addToBucket).
      const pool = s.pool;
      const i = L.W * (((timeNs - ld.r0Start) * ld.r0Inv) | 0); // in [0, buckets): `| 0` floors
      const c = pool[i]++;
      if (c < L.INLINE) {
        pool[i + 2 + c] = slot;
      } else {
        s.reci[2 * k + L.NEXT] = pool[i + 1];
        pool[i + 1] = slot;
      }
    } else {
      ld.insertBelowTop(slot);
    }
    return rec[k + 2] * L.SLOT_LIMIT + slot;
  }

  /** Marks an event cancelled; it is dropped when it reaches the front. Cancelling a fired event is a no-op. */
  cancel(handle: EventHandle): void {
    const s = this.s;
    const slot = handle % L.SLOT_LIMIT;
    const g = (handle - slot) / L.SLOT_LIMIT;
    if (slot >= 0 && slot < s.capacity && s.rec[L.REC * slot + 2] === g && s.target[slot] !== null) {
      s.target[slot] = null;
      s.liveCount--;
    }
  }

  /** Time of the next live event, or Infinity when none is left. */
  peekTimeNs(): number {
    const s = this.s;
    const ld = this.ladder;
    return ld.front() ? s.bTime[s.bHead] : Infinity;
  }

  /**
   * Removes the next live event if it is no later than `untilNs` and returns its target, with its time and
   * arg in `lastPoppedTimeNs` and `lastPoppedArg`; returns null when there is none.
   */
  popUntil(untilNs: number): EventTarget | null {
    const s = this.s;
    const ld = this.ladder;
    let h = s.bHead;
    if (h === s.bEnd || s.target[s.bSlot[h]] === null) {
      if (!ld.front()) return null;
      h = s.bHead;
    }
    const t = s.bTime[h];
    if (t > untilNs) return null;
    const slot = s.bSlot[h];
    s.bHead = h + 1;
    s.liveCount--;
    s.poppedTimeNs = t;
    const rec = s.rec;
    const k = L.REC * slot;
    s.poppedArg = rec[k + 1];
    const target = s.target[slot];
    // Free the slot (as freeSlot does).
    s.target[slot] = null;
    const g = rec[k + 2];
    rec[k + 2] = g < 0x7fffffff ? g + 1 : 0;
    s.freeSlots[s.freeCount++] = slot;
    return target;
  }
}
