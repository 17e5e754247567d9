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
  private timeNs: Float64Array;
  private seq: Float64Array;
  private arg: Float64Array;
  private cancelled: Uint8Array;
  private target: (EventTarget | undefined)[];
  private heap: Int32Array;
  private freeSlots: Int32Array;
  private freeCount = 0;
  private slotsUsed = 0;
  private heapSize = 0;
  private nextSeq = 0;
  private liveCount = 0;

  constructor(initialCapacity = 1024) {
    const cap = Math.max(16, initialCapacity);
    this.timeNs = new Float64Array(cap);
    this.seq = new Float64Array(cap);
    this.arg = new Float64Array(cap);
    this.cancelled = new Uint8Array(cap);
    this.target = new Array(cap);
    this.heap = new Int32Array(cap);
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
    this.timeNs[slot] = timeNs;
    this.seq[slot] = s;
    this.arg[slot] = arg;
    this.cancelled[slot] = 0;
    this.target[slot] = target;
    this.siftUp(this.heapSize++, slot);
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
    return this.heapSize > 0 ? this.timeNs[this.heap[0]] : Infinity;
  }

  /**
   * Removes the next live event no later than `untilNs` and returns its slot; read it with `slotTarget`, `slotArg`, `slotTime`
   * before the next push. Returns -1 when there is none.
   */
  popSlotUntil(untilNs = Infinity): number {
    this.dropCancelledTop();
    if (this.heapSize === 0 || this.timeNs[this.heap[0]] > untilNs) return -1;
    const slot = this.removeTop();
    this.liveCount--;
    return slot;
  }

  slotTimeNs(slot: number): number {
    return this.timeNs[slot];
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
    while (this.heapSize > 0 && this.cancelled[this.heap[0]]) {
      const slot = this.removeTop();
      this.target[slot] = undefined;
      this.freeSlots[this.freeCount++] = slot;
    }
  }

  private removeTop(): number {
    const top = this.heap[0];
    const last = this.heap[--this.heapSize];
    if (this.heapSize > 0) this.siftDown(0, last);
    return top;
  }

  private allocSlot(): number {
    if (this.freeCount > 0) return this.freeSlots[--this.freeCount];
    if (this.slotsUsed === this.timeNs.length) this.grow();
    if (this.slotsUsed >= SLOT_LIMIT) throw new Error(`event queue holds more than ${SLOT_LIMIT} events`);
    return this.slotsUsed++;
  }

  private grow(): void {
    const cap = this.timeNs.length * 2;
    const f = (a: Float64Array) => {
      const b = new Float64Array(cap);
      b.set(a);
      return b;
    };
    this.timeNs = f(this.timeNs);
    this.seq = f(this.seq);
    this.arg = f(this.arg);
    const c = new Uint8Array(cap);
    c.set(this.cancelled);
    this.cancelled = c;
    const h = new Int32Array(cap);
    h.set(this.heap);
    this.heap = h;
    const fr = new Int32Array(cap);
    fr.set(this.freeSlots);
    this.freeSlots = fr;
    this.target.length = cap;
  }

  /** True when slot a must pop before slot b. */
  private before(a: number, b: number): boolean {
    const ta = this.timeNs[a];
    const tb = this.timeNs[b];
    return ta < tb || (ta === tb && this.seq[a] < this.seq[b]);
  }

  private siftUp(pos: number, slot: number): void {
    const heap = this.heap;
    while (pos > 0) {
      const parentPos = (pos - 1) >> 1;
      const parent = heap[parentPos];
      if (!this.before(slot, parent)) break;
      heap[pos] = parent;
      pos = parentPos;
    }
    heap[pos] = slot;
  }

  private siftDown(pos: number, slot: number): void {
    const heap = this.heap;
    const n = this.heapSize;
    for (;;) {
      let child = 2 * pos + 1;
      if (child >= n) break;
      const right = child + 1;
      if (right < n && this.before(heap[right], heap[child])) child = right;
      if (!this.before(heap[child], slot)) break;
      heap[pos] = heap[child];
      pos = child;
    }
    heap[pos] = slot;
  }
}
