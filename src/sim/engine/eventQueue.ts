/**
 * Priority queue of timed events for the discrete-event engine: a ladder queue (Tang, Goh & Thng, 2005).
 *
 * Events pop in (timeNs, insertion sequence) order: two events at the same time pop in the order they
 * were pushed, which makes every run deterministic. The structure has three tiers, each holding a
 * disjoint range of times:
 *   - top: an unsorted list of the events at or after `topStart`;
 *   - rungs: levels of time buckets (unsorted lists); a bucket holding too many events when it is reached
 *     is split into a finer rung below, so every event is touched O(1) times on average;
 *   - bottom: a small sorted array of the next events, popped from the front.
 * No sequence number is stored: every list is appended to in push order and split or sorted stably, so
 * among events of equal time list order is always push order. Event data lives in typed arrays indexed by
 * slot, so push/pop allocate nothing. Cancellation is lazy: a cancelled event keeps its place and is
 * dropped when it reaches the front. Handles carry a per-slot generation, so cancelling an event that
 * already fired is a no-op even after its slot is reused.
 */

import { LadderRungs } from './ladderRungs.js';

/** Receives an event when it fires. `arg` is the number given when the event was scheduled. */
export interface EventTarget {
  onEvent(arg: number): void;
}

/** Opaque handle for cancelling one scheduled event. */
export type EventHandle = number;

/** Slots are addressed with 22 bits in a handle; the rest of the handle is the slot's generation. */
const SLOT_BITS = 22;
const SLOT_LIMIT = 1 << SLOT_BITS;
/** A bottom this large that would take an insertion far from its end is spilled into a new rung. */
const BOTTOM_SPILL = 256;

export class EventQueue {
  // Slot arrays, indexed by slot: what an event carries. `target` is null once cancelled or freed.
  private time: Float64Array;
  private arg: Float64Array;
  private next: Int32Array;
  private gen: Int32Array;
  private target: (EventTarget | null)[];
  private freeSlots: Int32Array;
  private freeCount = 0;
  private slotsUsed = 0;
  private liveCount = 0;
  private poppedTimeNs = 0;
  // Top: events at or after topStart, unsorted, in push order. topStart is 0 while no rung exists.
  private topStart = 0;
  private topHead = -1;
  private topTail = -1;
  private topCount = 0;
  private topMin = Infinity;
  private topMax = -Infinity;
  private readonly rungs: LadderRungs;
  // Bottom: the next events sorted by (time, push order), in [bHead, bEnd).
  private bTime: Float64Array;
  private bSlot: Int32Array;
  private bHead = 0;
  private bEnd = 0;

  constructor(initialCapacity = 1024) {
    const cap = Math.max(16, initialCapacity);
    this.time = new Float64Array(cap);
    this.arg = new Float64Array(cap);
    this.next = new Int32Array(cap);
    this.gen = new Int32Array(cap);
    this.target = new Array<EventTarget | null>(cap).fill(null);
    this.freeSlots = new Int32Array(cap);
    this.bTime = new Float64Array(64);
    this.bSlot = new Int32Array(64);
    this.rungs = new LadderRungs(this.next, this.time);
  }

  /** Number of scheduled events that are not cancelled. */
  get size(): number {
    return this.liveCount;
  }

  /** Schedules `target.onEvent(arg)` at absolute time `timeNs` (integer nanoseconds). */
  push(timeNs: number, target: EventTarget, arg = 0): EventHandle {
    let slot: number;
    if (this.freeCount > 0) slot = this.freeSlots[--this.freeCount];
    else slot = this.newSlot();
    this.time[slot] = timeNs;
    this.arg[slot] = arg;
    this.target[slot] = target;
    this.liveCount++;
    if (timeNs >= this.topStart) {
      this.next[slot] = -1;
      if (this.topTail < 0) this.topHead = slot;
      else this.next[this.topTail] = slot;
      this.topTail = slot;
      this.topCount++;
      if (timeNs < this.topMin) this.topMin = timeNs;
      if (timeNs > this.topMax) this.topMax = timeNs;
    } else if (!this.rungs.insert(slot, timeNs)) {
      this.insertBottom(slot, timeNs);
    }
    return this.gen[slot] * SLOT_LIMIT + slot;
  }

  /** Marks an event cancelled; it is dropped when it reaches the front. Cancelling a fired event is a no-op. */
  cancel(handle: EventHandle): void {
    const slot = handle % SLOT_LIMIT;
    const g = (handle - slot) / SLOT_LIMIT;
    if (slot >= 0 && slot < this.slotsUsed && this.gen[slot] === g && this.target[slot] !== null) {
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
    return this.arg[slot];
  }

  /** Returns the slot's target and frees the slot. */
  takeSlotTarget(slot: number): EventTarget {
    const t = this.target[slot] as EventTarget;
    this.freeSlot(slot);
    return t;
  }

  private freeSlot(slot: number): void {
    this.target[slot] = null;
    this.gen[slot] = (this.gen[slot] + 1) & 0x7fffffff;
    this.freeSlots[this.freeCount++] = slot;
  }

  /** Drops cancelled events and refills the bottom until a live event is at the front; false when empty. */
  private front(): boolean {
    for (;;) {
      while (this.bHead < this.bEnd) {
        const slot = this.bSlot[this.bHead];
        if (this.target[slot] !== null) return true;
        this.bHead++;
        this.freeSlot(slot);
      }
      if (!this.refill()) return false;
    }
  }

  /** Loads the next bucket of the ladder into the (empty) bottom; false when no event is left. */
  private refill(): boolean {
    const rungs = this.rungs;
    this.bHead = this.bEnd = 0;
    for (;;) {
      if (rungs.depth === 0) {
        if (this.topCount === 0) {
          this.topStart = 0;
          return false;
        }
        this.topStart = rungs.spawnFromList(this.topHead, this.topCount, this.topMin, this.topMax);
        this.topHead = this.topTail = -1;
        this.topCount = 0;
        this.topMin = Infinity;
        this.topMax = -Infinity;
      }
      const head = rungs.takeNextBucket();
      if (head === -1) continue; // the deepest rung was empty and has been removed
      if (head === -2) continue; // the bucket was split into a new rung
      this.loadBottom(head, rungs.takenCount);
      return true;
    }
  }

  /** Copies a bucket's list into the bottom and sorts it stably by time. */
  private loadBottom(head: number, count: number): void {
    if (count > this.bTime.length) this.growBottom(count);
    const bTime = this.bTime;
    const bSlot = this.bSlot;
    const time = this.time;
    const next = this.next;
    let n = 0;
    for (let s = head; s >= 0; s = next[s]) {
      const t = time[s];
      let i = n++;
      while (i > 0 && bTime[i - 1] > t) {
        bTime[i] = bTime[i - 1];
        bSlot[i] = bSlot[i - 1];
        i--;
      }
      bTime[i] = t;
      bSlot[i] = s;
    }
    this.bEnd = n;
  }

  /** Inserts into the bottom after any event of equal time (the bottom holds every event before the rungs). */
  private insertBottom(slot: number, t: number): void {
    const count = this.bEnd - this.bHead;
    if (count >= BOTTOM_SPILL && this.bTime[this.bEnd - 16] > t && this.rungs.canSpawn()) {
      this.rungs.spawnFromSorted(this.bSlot, this.bHead, this.bEnd, Math.min(t, this.bTime[this.bHead]));
      this.bHead = this.bEnd = 0;
      if (!this.rungs.insert(slot, t)) throw new Error('event queue: spilled rung does not cover the event');
      return;
    }
    if (this.bEnd === this.bTime.length) {
      if (this.bHead > 0) {
        this.bTime.copyWithin(0, this.bHead, this.bEnd);
        this.bSlot.copyWithin(0, this.bHead, this.bEnd);
        this.bEnd -= this.bHead;
        this.bHead = 0;
      } else this.growBottom(count + 1);
    }
    const bTime = this.bTime;
    const bSlot = this.bSlot;
    let i = this.bEnd++;
    while (i > this.bHead && bTime[i - 1] > t) {
      bTime[i] = bTime[i - 1];
      bSlot[i] = bSlot[i - 1];
      i--;
    }
    bTime[i] = t;
    bSlot[i] = slot;
  }

  private growBottom(min: number): void {
    let cap = this.bTime.length * 2;
    while (cap < min) cap *= 2;
    const t = new Float64Array(cap);
    t.set(this.bTime.subarray(this.bHead, this.bEnd));
    const s = new Int32Array(cap);
    s.set(this.bSlot.subarray(this.bHead, this.bEnd));
    this.bEnd -= this.bHead;
    this.bHead = 0;
    this.bTime = t;
    this.bSlot = s;
  }

  private newSlot(): number {
    if (this.slotsUsed === this.time.length) this.grow();
    if (this.slotsUsed >= SLOT_LIMIT) throw new Error(`event queue holds more than ${SLOT_LIMIT} events`);
    return this.slotsUsed++;
  }

  private grow(): void {
    const cap = this.time.length * 2;
    const f64 = (a: Float64Array) => {
      const b = new Float64Array(cap);
      b.set(a);
      return b;
    };
    const i32 = (a: Int32Array) => {
      const b = new Int32Array(cap);
      b.set(a);
      return b;
    };
    this.time = f64(this.time);
    this.arg = f64(this.arg);
    this.next = i32(this.next);
    this.gen = i32(this.gen);
    this.freeSlots = i32(this.freeSlots);
    for (let i = this.target.length; i < cap; i++) this.target.push(null);
    this.rungs.setSlotArrays(this.next, this.time);
  }
}
