/**
 * Storage under the ladder queue (ladder.ts): event slots, the bucket pool and the bottom.
 *
 * - Slots: an event's numbers share one 32-byte record (time, arg, generation, overflow link), so a cold
 *   event costs one cache miss rather than one per array; its target sits in a parallel array.
 * - Pool: buckets of W words: [count, overflow head, up to INLINE slots]. The first INLINE events of a
 *   bucket sit in it in push order, so reading a bucket chases no pointers; later ones are linked through
 *   their records, newest first. A count of -1 marks the sentinel after a rung's last bucket.
 * - Bottom: the next events sorted by (time, push order), in [bHead, bEnd) of bTime and bSlot.
 * - Far list: events at 2^53 ns (about 104 days) or later, or at Infinity, sorted by (time, push order); the
 *   ladder needs exact integer times, and these only come from degenerate delays, so they may be slow.
 */

/** Receives an event when it fires. `arg` is the number given when the event was scheduled. */
export interface EventTarget {
  onEvent(arg: number): void;
}

/** Layout constants (a const enum, so that tsc writes them into the code as literals). */
export const enum L {
  /** Slots are addressed with 22 bits in a handle; the rest of the handle is the slot's generation. */
  SLOT_LIMIT = 4194304,
  /** Doubles per slot record: [time, arg, generation, next]; `next` is read through the int32 view at 8s + 6. */
  REC = 4,
  NEXT = 6,
  /** Words per bucket, and the slots a bucket holds before it links further ones through their records. */
  W = 8,
  // eslint-disable-next-line @typescript-eslint/no-duplicate-enum-values -- a size that equals NEXT's offset by chance
  INLINE = 6,
  /** 2^53: times from here on are not all integers; such events wait, sorted, in the far list. */
  FAR = 9007199254740992,
}

/**
 * The slots, the bucket pool, the bottom and the far list, as one component: the ladder (ladder.ts) and the
 * queue's hot paths (eventQueue.ts) each hold this same object and read and write its arrays in place.
 */
export class Bottom {
  // Slot records and targets; `target` is null once the event is cancelled or its slot freed.
  rec = new Float64Array(0);
  reci = new Int32Array(0);
  target: (EventTarget | null)[] = [];
  freeSlots = new Int32Array(0);
  freeCount = 0;
  liveCount = 0;
  // Fields holding times start as -0, a double: a field that starts as a small integer changes the object's
  // hidden class when it first gets a fraction or a number past 2^31, and that throws away optimized code.
  poppedTimeNs = -0;
  poppedArg = -0;
  pool = new Int32Array(L.W * 1024);
  private scratch = new Int32Array(64);
  private counts = new Int32Array(64);
  bTime = new Float64Array(64);
  bSlot = new Int32Array(64);
  bHead = 0;
  bEnd = 0;
  private farTime = new Float64Array(0);
  private farSlot = new Int32Array(0);
  farCount = 0;

  /** Number of slots (every one is either free or holds an event). */
  get capacity(): number {
    return this.freeSlots.length;
  }

  /** Grows the slot arrays to `cap` slots and frees the new ones. */
  addSlots(cap: number): void {
    const old = this.capacity;
    if (old >= L.SLOT_LIMIT) throw new Error(`event queue holds more than ${L.SLOT_LIMIT} events`);
    cap = Math.min(cap, L.SLOT_LIMIT);
    const rec = new Float64Array(L.REC * cap);
    rec.set(this.rec);
    this.rec = rec;
    this.reci = new Int32Array(rec.buffer);
    const free = new Int32Array(cap);
    free.set(this.freeSlots.subarray(0, this.freeCount));
    for (let s = cap - 1; s >= old; s--) free[this.freeCount++] = s; // lowest first off the stack
    this.freeSlots = free;
    for (let i = old; i < cap; i++) this.target.push(null);
  }

  freeSlot(slot: number): void {
    this.target[slot] = null;
    const g = this.rec[L.REC * slot + 2];
    this.rec[L.REC * slot + 2] = g < 0x7fffffff ? g + 1 : 0;
    this.freeSlots[this.freeCount++] = slot;
  }

  reservePool(words: number): void {
    if (words <= this.pool.length) return;
    let cap = this.pool.length * 2;
    while (cap < words) cap *= 2;
    const p = new Int32Array(cap);
    p.set(this.pool);
    this.pool = p;
  }

  /** Adds a slot to the bucket at pool word `i`. */
  addToBucket(i: number, slot: number): void {
    const pool = this.pool;
    const c = pool[i]++;
    if (c < L.INLINE) {
      pool[i + 2 + c] = slot;
    } else {
      this.reci[2 * L.REC * slot + L.NEXT] = pool[i + 1];
      pool[i + 1] = slot;
    }
  }

  /** Returns scratch holding the `count` slots of the bucket at pool word `i` in push order. */
  gatherBucket(i: number, count: number): Int32Array {
    if (this.scratch.length < 2 * count) this.scratch = new Int32Array(4 * count);
    const list = this.scratch;
    const inline = Math.min(count, L.INLINE);
    for (let n = 0; n < inline; n++) list[n] = this.pool[i + 2 + n];
    for (let n = count - 1, s = this.pool[i + 1]; n >= inline; n--, s = this.reci[2 * L.REC * s + L.NEXT]) list[n] = s;
    return list;
  }

  /** Appends the bucket at pool word `i` (all later than the bottom's events) to the bottom, stably sorted. */
  appendBucketToBottom(i: number, count: number): void {
    if (this.bEnd + count > this.bTime.length) this.makeBottomRoom(count);
    const pool = this.pool;
    const rec = this.rec;
    const bTime = this.bTime;
    const bSlot = this.bSlot;
    const lo = this.bEnd;
    const end = lo + count;
    // Copy in push order: the inline slots, then the overflow list (newest first) from the end backwards.
    const inline = count < L.INLINE ? count : L.INLINE;
    for (let n = 0; n < inline; n++) {
      const s = pool[i + 2 + n];
      bSlot[lo + n] = s;
      bTime[lo + n] = rec[L.REC * s];
    }
    for (let n = end - 1, s = pool[i + 1]; n >= lo + inline; n--, s = this.reci[2 * L.REC * s + L.NEXT]) {
      bSlot[n] = s;
      bTime[n] = rec[L.REC * s];
    }
    // Stable insertion sort of [lo, end) by time.
    for (let n = lo + 1; n < end; n++) {
      const t = bTime[n];
      if (bTime[n - 1] <= t) continue;
      const s = bSlot[n];
      let m = n;
      do {
        bTime[m] = bTime[m - 1];
        bSlot[m] = bSlot[m - 1];
        m--;
      } while (m > lo && bTime[m - 1] > t);
      bTime[m] = t;
      bSlot[m] = s;
    }
    this.bEnd = end;
  }

  /** Fills the empty bottom with the bucket at pool word `i`, all in [start, start + width): a counting sort. */
  countingSort(i: number, count: number, start: number, width: number): void {
    if (count > this.bTime.length) this.makeBottomRoom(count);
    if (this.counts.length < width) this.counts = new Int32Array(2 * width);
    const list = this.gatherBucket(i, count); // [0, count): slots in push order; [count, 2 count): offsets
    const counts = this.counts;
    counts.fill(0, 0, width);
    for (let n = 0; n < count; n++) {
      const off = this.rec[L.REC * list[n]] - start;
      list[count + n] = off;
      counts[off]++;
    }
    for (let o = 0, at = 0; o < width; o++) {
      const c = counts[o];
      counts[o] = at; // where each time's group starts
      at += c;
    }
    for (let n = 0; n < count; n++) {
      const off = list[count + n];
      const p = counts[off]++;
      this.bTime[p] = start + off;
      this.bSlot[p] = list[n];
    }
    this.bHead = 0;
    this.bEnd = count;
  }

  /** Inserts an event into the bottom after every event of equal or earlier time. */
  insertIntoBottom(slot: number): void {
    const t = this.rec[L.REC * slot];
    if (this.bEnd === this.bTime.length) this.makeBottomRoom(1);
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

  /** Files a far event (see L.FAR) and returns its handle. */
  pushFar(slot: number): number {
    const t = this.rec[L.REC * slot];
    if (this.farCount === this.farTime.length) {
      const time = new Float64Array(2 * this.farCount + 16);
      time.set(this.farTime);
      this.farTime = time;
      const slots = new Int32Array(time.length);
      slots.set(this.farSlot);
      this.farSlot = slots;
    }
    let i = this.farCount++;
    for (; i > 0 && this.farTime[i - 1] > t; i--) {
      this.farTime[i] = this.farTime[i - 1];
      this.farSlot[i] = this.farSlot[i - 1];
    }
    this.farTime[i] = t;
    this.farSlot[i] = slot;
    return this.rec[L.REC * slot + 2] * L.SLOT_LIMIT + slot;
  }

  /** Moves the far list into the empty bottom. */
  drainFar(): void {
    const n = this.farCount;
    if (n > this.bTime.length) this.makeBottomRoom(n);
    this.bTime.set(this.farTime.subarray(0, n));
    this.bSlot.set(this.farSlot.subarray(0, n));
    this.bHead = 0;
    this.bEnd = n;
    this.farCount = 0;
  }

  private makeBottomRoom(extra: number): void {
    const n = this.bEnd - this.bHead;
    let cap = this.bTime.length;
    while (cap < n + extra) cap *= 2;
    if (cap === this.bTime.length) {
      this.bTime.copyWithin(0, this.bHead, this.bEnd);
      this.bSlot.copyWithin(0, this.bHead, this.bEnd);
    } else {
      const t = new Float64Array(cap);
      t.set(this.bTime.subarray(this.bHead, this.bEnd));
      const s = new Int32Array(cap);
      s.set(this.bSlot.subarray(this.bHead, this.bEnd));
      this.bTime = t;
      this.bSlot = s;
    }
    this.bHead = 0;
    this.bEnd = n;
  }
}
