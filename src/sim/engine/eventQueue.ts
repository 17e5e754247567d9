/**
 * Priority queue of timed events for the discrete-event engine.
 *
 * A binary heap over slot indices, with event data kept in typed arrays so the hot path
 * (push/pop) allocates nothing. Events are ordered by (timeNs, insertion sequence): two events at
 * the same time pop in the order they were pushed, which makes every run deterministic.
 * Cancellation is lazy: a cancelled event stays in the heap and is skipped when it reaches the top.
 */

/** Receives an event when it fires. `arg` is the number given when the event was scheduled. */
export interface EventTarget {
  onEvent(arg: number): void;
}

/** Opaque handle for cancelling one scheduled event. */
export type EventHandle = number;

/** Slots are addressed with 22 bits in a handle; the rest of the handle is the event's sequence number. */
const SLOT_BITS = 22;
const SLOT_LIMIT = 1 << SLOT_BITS;

export class EventQueue {
  // Heap arrays, indexed by heap position: the keys sit next to each other so sifting reads no slots.
  private hTime: Float64Array;
  private hSeq: Float64Array;
  private hSlot: Int32Array;
  // Slot arrays, indexed by slot: what an event carries.
  private seq: Float64Array;
  private arg: Float64Array;
  private cancelled: Uint8Array;
  private target: (EventTarget | undefined)[];
  private freeSlots: Int32Array;
  private freeCount = 0;
  private slotsUsed = 0;
  private heapSize = 0;
  private nextSeq = 0;
  private liveCount = 0;
  private poppedTimeNs = 0;

  constructor(initialCapacity = 1024) {
    const cap = Math.max(16, initialCapacity);
    this.hTime = new Float64Array(cap);
    this.hSeq = new Float64Array(cap);
    this.hSlot = new Int32Array(cap);
    this.seq = new Float64Array(cap);
    this.arg = new Float64Array(cap);
    this.cancelled = new Uint8Array(cap);
    this.target = new Array(cap);
    this.freeSlots = new Int32Array(cap);
  }

  /** Number of scheduled events that are not cancelled. */
  get size(): number {
    return this.liveCount;
  }

  /** Schedules `target.onEvent(arg)` at absolute time `timeNs` (integer nanoseconds). */
  push(timeNs: number, target: EventTarget, arg = 0): EventHandle {
    const slot = this.allocSlot();
    const s = this.nextSeq++;
    this.seq[slot] = s;
    this.arg[slot] = arg;
    this.cancelled[slot] = 0;
    this.target[slot] = target;
    this.siftUp(this.heapSize++, timeNs, s, slot);
    this.liveCount++;
    return s * SLOT_LIMIT + slot;
  }

  /** Marks an event cancelled; it is dropped when it reaches the top. Cancelling a fired event is a no-op. */
  cancel(handle: EventHandle): void {
    const slot = handle % SLOT_LIMIT;
    const s = Math.floor(handle / SLOT_LIMIT);
    if (slot < this.slotsUsed && this.seq[slot] === s && this.target[slot] !== undefined && !this.cancelled[slot]) {
      this.cancelled[slot] = 1;
      this.liveCount--;
    }
  }

  /** Time of the next live event, or Infinity when none is left. */
  peekTimeNs(): number {
    this.dropCancelledTop();
    return this.heapSize > 0 ? this.hTime[0] : Infinity;
  }

  /**
   * Removes the next live event no later than `untilNs` and returns its slot; read it with
   * `slotArg` and `takeSlotTarget` (and `lastPoppedTimeNs`) before the next push. Returns -1 when there is none.
   */
  popSlotUntil(untilNs = Infinity): number {
    this.dropCancelledTop();
    if (this.heapSize === 0 || this.hTime[0] > untilNs) return -1;
    this.poppedTimeNs = this.hTime[0];
    const slot = this.removeTop();
    this.liveCount--;
    return slot;
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
    this.target[slot] = undefined;
    this.freeSlots[this.freeCount++] = slot;
    return t;
  }

  private dropCancelledTop(): void {
    while (this.heapSize > 0 && this.cancelled[this.hSlot[0]]) {
      const slot = this.removeTop();
      this.target[slot] = undefined;
      this.freeSlots[this.freeCount++] = slot;
    }
  }

  private removeTop(): number {
    const top = this.hSlot[0];
    const last = --this.heapSize;
    if (last > 0) this.siftDown(this.hTime[last], this.hSeq[last], this.hSlot[last]);
    return top;
  }

  private allocSlot(): number {
    if (this.freeCount > 0) return this.freeSlots[--this.freeCount];
    if (this.slotsUsed === this.seq.length) this.grow();
    if (this.slotsUsed >= SLOT_LIMIT) throw new Error(`event queue holds more than ${SLOT_LIMIT} events`);
    return this.slotsUsed++;
  }

  private grow(): void {
    const cap = this.seq.length * 2;
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
    this.hTime = f64(this.hTime);
    this.hSeq = f64(this.hSeq);
    this.hSlot = i32(this.hSlot);
    this.seq = f64(this.seq);
    this.arg = f64(this.arg);
    const c = new Uint8Array(cap);
    c.set(this.cancelled);
    this.cancelled = c;
    this.freeSlots = i32(this.freeSlots);
    this.target.length = cap;
  }

  private siftUp(pos: number, t: number, s: number, slot: number): void {
    const hTime = this.hTime;
    const hSeq = this.hSeq;
    const hSlot = this.hSlot;
    while (pos > 0) {
      const p = (pos - 1) >> 1;
      const pt = hTime[p];
      if (pt < t || (pt === t && hSeq[p] < s)) break;
      hTime[pos] = pt;
      hSeq[pos] = hSeq[p];
      hSlot[pos] = hSlot[p];
      pos = p;
    }
    hTime[pos] = t;
    hSeq[pos] = s;
    hSlot[pos] = slot;
  }

  /** Places (t, s, slot) starting from the root, moving smaller children up. */
  private siftDown(t: number, s: number, slot: number): void {
    const hTime = this.hTime;
    const hSeq = this.hSeq;
    const hSlot = this.hSlot;
    const n = this.heapSize;
    let pos = 0;
    for (;;) {
      let c = 2 * pos + 1;
      if (c >= n) break;
      let ct = hTime[c];
      const r = c + 1;
      if (r < n) {
        const rt = hTime[r];
        if (rt < ct || (rt === ct && hSeq[r] < hSeq[c])) {
          c = r;
          ct = rt;
        }
      }
      if (t < ct || (t === ct && s < hSeq[c])) break;
      hTime[pos] = ct;
      hSeq[pos] = hSeq[c];
      hSlot[pos] = hSlot[c];
      pos = c;
    }
    hTime[pos] = t;
    hSeq[pos] = s;
    hSlot[pos] = slot;
  }
}
