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
 * This class holds only the hot paths (filing into the top or rung 0, popping the bottom's front), small
 * enough for V8 to inline into Simulator; everything else is in LadderBase.
 */

import { L, LadderBase, type EventTarget } from './ladderBase.js';

export type { EventTarget } from './ladderBase.js';

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

  /** Schedules `target.onEvent(arg)` at absolute time `timeNs` (integer nanoseconds). */
  push(timeNs: number, target: EventTarget, arg = 0): EventHandle {
    const slot = this.freeCount > 0 ? this.freeSlots[--this.freeCount] : this.newSlot();
    const rec = this.rec;
    const k = L.REC * slot;
    rec[k] = timeNs;
    rec[k + 1] = arg;
    this.target[slot] = target;
    this.liveCount++;
    if (timeNs >= this.topStart) {
      this.topSlots[this.topCount++] = slot;
      if (timeNs < this.topMin) this.topMin = timeNs;
      if (timeNs > this.topMax) this.topMax = timeNs;
    } else if (timeNs >= this.rCurStart[0] && this.depth > 0) {
      // Rung 0, whose buckets start the pool: the common case below the top. Prepend to the bucket's list.
      const pool = this.pool;
      const i = L.W * Math.floor((timeNs - this.rStart[0]) / this.rWidth[0]);
      this.reci[2 * k + L.NEXT] = pool[i];
      pool[i] = slot;
      pool[i + 1]++;
    } else {
      this.insertBelowTop(slot);
    }
    return rec[k + 2] * L.SLOT_LIMIT + slot;
  }

  /** Marks an event cancelled; it is dropped when it reaches the front. Cancelling a fired event is a no-op. */
  cancel(handle: EventHandle): void {
    const slot = handle % L.SLOT_LIMIT;
    const g = (handle - slot) / L.SLOT_LIMIT;
    if (slot >= 0 && slot < this.slotsUsed && this.rec[L.REC * slot + 2] === g && this.target[slot] !== null) {
      this.target[slot] = null;
      this.liveCount--;
    }
  }

  /** Time of the next live event, or Infinity when none is left. */
  peekTimeNs(): number {
    return this.front() ? this.bTime[this.bHead] : Infinity;
  }

  /**
   * Removes the next live event no later than `untilNs` and returns its slot; read it with
   * `slotArg` and `takeSlotTarget` (and `lastPoppedTimeNs`) before the next push. Returns -1 when there is none.
   */
  popSlotUntil(untilNs = Infinity): number {
    let h = this.bHead;
    if (h === this.bEnd || this.target[this.bSlot[h]] === null) {
      if (!this.front()) return -1;
      h = this.bHead;
    }
    const t = this.bTime[h];
    if (t > untilNs) return -1;
    this.poppedTimeNs = t;
    this.bHead = h + 1;
    this.liveCount--;
    return this.bSlot[h];
  }

  /** Time of the event most recently popped. */
  get lastPoppedTimeNs(): number {
    return this.poppedTimeNs;
  }

  slotArg(slot: number): number {
    return this.rec[L.REC * slot + 1];
  }

  /** Returns the slot's target and frees the slot. */
  takeSlotTarget(slot: number): EventTarget {
    const t = this.target[slot] as EventTarget;
    this.freeSlot(slot);
    return t;
  }
}
