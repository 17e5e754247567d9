/**
 * State and slow paths of the ladder queue behind EventQueue (Tang, Goh & Thng, "Ladder Queue", 2005).
 * EventQueue (eventQueue.ts) holds the hot paths; keep them small so V8 inlines them into the caller.
 *
 * Three tiers hold disjoint ranges of time:
 *   - top: an unsorted list of the events at or after `topStart` (0 while there is no rung);
 *   - rungs: levels of time buckets, each an unsorted list. Rung 0 covers [its start, topStart); each deeper
 *     rung covers the one bucket of the rung above that was split because it held too many events. A rung's
 *     buckets before its current one are spent; an event goes into the shallowest rung whose current bucket
 *     starts at or before its time;
 *   - bottom: a sorted array of the next events (every event before the deepest rung's current bucket).
 * No sequence number is stored. Bucket lists are singly linked through the slots, newest first (a push
 * prepends, touching only the bucket and the event's own record); moves keep that order and sorts are stable,
 * so among events of equal time the order is always push order. Times and bucket widths are integers below 2^53, so
 * `floor((t - start) / width)` is exact. Functions here take no floating-point arguments, which a call that
 * V8 does not inline would box. An event's numbers share one 32-byte record, so a cold event costs one
 * cache miss rather than one per array.
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
  /** Words per bucket in the pool: head slot of its list, count (-1 marks the sentinel after a rung). */
  W = 2,
}
/** Deepest ladder; a split divides a bucket's width by at least SPLIT_OVER / LOAD, so 2^53 needs < 16. */
const MAX_RUNGS = 32;
/** A bucket holding more events than this is split into a new rung rather than sorted. */
const SPLIT_OVER = 48;
/** Events per bucket aimed at when a rung is made. */
const LOAD = 4;
/** The most buckets one rung may have. */
const MAX_BUCKETS = 1 << 20;
/** A refill moves buckets into the bottom until it holds this many events. */
const REFILL_MIN = 8;
/** A bottom this large that would take an insertion far from its end is spilled into a new rung. */
const BOTTOM_SPILL = 256;

export class LadderBase {
  // Slot records (see L.REC) and targets; `target` is null once the event is cancelled or its slot freed.
  protected rec: Float64Array;
  protected reci: Int32Array;
  protected target: (EventTarget | null)[];
  protected freeSlots: Int32Array;
  protected freeCount = 0;
  protected slotsUsed = 0;
  protected liveCount = 0;
  protected poppedTimeNs = 0;
  // Top: slots in push order (as many places as there are slots).
  protected topStart = 0;
  protected topSlots: Int32Array;
  protected topCount = 0;
  protected topMin = Infinity;
  protected topMax = -Infinity;
  // Rungs: per-rung parameters, buckets in a pool used as a stack.
  protected depth = 0;
  protected readonly rStart = new Float64Array(MAX_RUNGS);
  protected readonly rWidth = new Float64Array(MAX_RUNGS);
  /** Start time of the rung's current bucket. */
  protected readonly rCurStart = new Float64Array(MAX_RUNGS);
  protected readonly rCur = new Int32Array(MAX_RUNGS);
  protected readonly rBase = new Int32Array(MAX_RUNGS);
  protected readonly rEnd = new Int32Array(MAX_RUNGS);
  protected pool = new Int32Array(L.W * 1024);
  private scratch = new Int32Array(64);
  // Bottom: events sorted by (time, push order) in [bHead, bEnd).
  protected bTime = new Float64Array(64);
  protected bSlot = new Int32Array(64);
  protected bHead = 0;
  protected bEnd = 0;

  constructor(initialCapacity: number) {
    const cap = Math.max(16, initialCapacity);
    this.rec = new Float64Array(L.REC * cap);
    this.reci = new Int32Array(this.rec.buffer);
    this.target = new Array<EventTarget | null>(cap).fill(null);
    this.freeSlots = new Int32Array(cap);
    this.topSlots = new Int32Array(cap);
  }

  protected newSlot(): number {
    if (this.slotsUsed === this.freeSlots.length) this.grow();
    if (this.slotsUsed >= L.SLOT_LIMIT) throw new Error(`event queue holds more than ${L.SLOT_LIMIT} events`);
    return this.slotsUsed++;
  }

  protected freeSlot(slot: number): void {
    this.target[slot] = null;
    const g = this.rec[L.REC * slot + 2];
    this.rec[L.REC * slot + 2] = g < 0x7fffffff ? g + 1 : 0;
    this.freeSlots[this.freeCount++] = slot;
  }

  /** Prepends a slot to the list of the bucket at pool word `i`. */
  private prepend(i: number, slot: number): void {
    this.reci[2 * L.REC * slot + L.NEXT] = this.pool[i];
    this.pool[i] = slot;
    this.pool[i + 1]++;
  }

  /** Files an event before topStart into the shallowest rung that covers it, else into the bottom. */
  protected insertBelowTop(slot: number): void {
    const t = this.rec[L.REC * slot];
    for (let r = 0; r < this.depth; r++) {
      if (t >= this.rCurStart[r]) {
        this.prepend(L.W * (this.rBase[r] + Math.floor((t - this.rStart[r]) / this.rWidth[r])), slot);
        return;
      }
    }
    const n = this.bEnd - this.bHead;
    if (n >= BOTTOM_SPILL && this.bTime[this.bEnd - 16] > t && this.depth > 0 && this.depth < MAX_RUNGS) {
      // Many later events would shift: turn the bottom into a rung covering it, then file the event there.
      const lo = Math.min(t, this.bTime[this.bHead]);
      const span = this.rCurStart[this.depth - 1] - lo;
      const width = Math.ceil(span / Math.min(Math.ceil(n / LOAD), MAX_BUCKETS));
      const base = this.newRung(lo, width, Math.ceil(span / width));
      for (let k = this.bHead; k < this.bEnd; k++) {
        this.prepend(L.W * (base + Math.floor((this.bTime[k] - lo) / width)), this.bSlot[k]);
      }
      this.bHead = this.bEnd = 0;
      this.prepend(L.W * (base + Math.floor((t - lo) / width)), slot);
      return;
    }
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

  /** Drops cancelled events and refills the bottom until a live event is at its front; false when empty. */
  protected front(): boolean {
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

  /** Moves the next buckets of the ladder into the empty bottom; false when no event is left. */
  private refill(): boolean {
    this.bHead = this.bEnd = 0;
    for (;;) {
      if (this.depth === 0 && !this.spawnFromTop()) return false;
      const pool = this.pool; // newRung may replace it
      const r = this.depth - 1;
      let i = L.W * (this.rBase[r] + this.rCur[r]);
      while (pool[i + 1] === 0) i += L.W;
      const count = pool[i + 1];
      const b = i / L.W - this.rBase[r];
      const width = this.rWidth[r];
      const bucketStart = this.rStart[r] + b * width;
      this.rCur[r] = b;
      this.rCurStart[r] = bucketStart;
      if (count < 0) {
        // The rung is spent: drop it, unless the bottom has events (it then bounds them).
        if (this.bEnd > 0) return true;
        pool[i + 1] = 0;
        this.depth = r;
        continue;
      }
      const split = count > SPLIT_OVER && width > 1 && this.depth < MAX_RUNGS;
      if (split && this.bEnd > 0) return true;
      pool[i + 1] = 0;
      this.rCur[r] = b + 1;
      this.rCurStart[r] = bucketStart + width;
      if (split) {
        this.splitBucket(pool[i], count, bucketStart, width);
        continue;
      }
      this.appendBucketToBottom(pool[i], count);
      if (this.bEnd >= REFILL_MIN) return true;
    }
  }

  /** Makes rung 0 from the top; false when the top is empty too. */
  private spawnFromTop(): boolean {
    const count = this.topCount;
    if (count === 0) {
      this.topStart = 0;
      return false;
    }
    const min = this.topMin;
    const nb = Math.min(Math.ceil(count / LOAD), MAX_BUCKETS);
    const width = Math.floor((this.topMax - min) / nb) + 1;
    this.topStart = min + nb * width;
    this.newRung(min, width, nb);
    this.topCount = 0;
    this.topMin = Infinity;
    this.topMax = -Infinity;
    const rec = this.rec;
    const reci = this.reci;
    const pool = this.pool;
    const top = this.topSlots;
    for (let k = 0; k < count; k++) {
      const s = top[k];
      const i = L.W * Math.floor((rec[L.REC * s] - min) / width);
      reci[2 * L.REC * s + L.NEXT] = pool[i];
      pool[i] = s;
      pool[i + 1]++;
    }
    return true;
  }

  /** Moves a bucket's list into a new rung below the deepest. */
  private splitBucket(head: number, count: number, start: number, width: number): void {
    if (this.scratch.length < count) this.scratch = new Int32Array(2 * count);
    const list = this.scratch;
    for (let n = 0, s = head; n < count; n++, s = this.reci[2 * L.REC * s + L.NEXT]) list[n] = s;
    const w = Math.ceil(width / Math.min(Math.ceil(count / LOAD), MAX_BUCKETS));
    const base = this.newRung(start, w, Math.ceil(width / w));
    for (let n = count - 1; n >= 0; n--) {
      const s = list[n]; // oldest first, so the new lists are newest first again
      this.prepend(L.W * (base + Math.floor((this.rec[L.REC * s] - start) / w)), s);
    }
  }

  /** Appends a bucket's events (all later than the bottom's) to the bottom, sorted stably by time. */
  private appendBucketToBottom(head: number, count: number): void {
    if (this.bEnd + count > this.bTime.length) this.makeBottomRoom(count);
    const bTime = this.bTime;
    const bSlot = this.bSlot;
    const rec = this.rec;
    const reci = this.reci;
    const end = this.bEnd + count;
    // The list is newest first: each event goes before every placed event of equal or later time.
    let start = end;
    for (let n = 0, s = head; n < count; n++, s = reci[2 * L.REC * s + L.NEXT]) {
      const t = rec[L.REC * s];
      let m = --start;
      while (m + 1 < end && bTime[m + 1] < t) {
        bTime[m] = bTime[m + 1];
        bSlot[m] = bSlot[m + 1];
        m++;
      }
      bTime[m] = t;
      bSlot[m] = s;
    }
    this.bEnd = end;
  }

  /** Pushes an empty rung of `buckets` buckets below the deepest; returns its base bucket in the pool. */
  private newRung(start: number, width: number, buckets: number): number {
    const r = this.depth++;
    const base = r === 0 ? 0 : this.rEnd[r - 1] + 1;
    const need = L.W * (base + buckets + 1);
    if (need > this.pool.length) {
      let cap = this.pool.length * 2;
      while (cap < need) cap *= 2;
      const p = new Int32Array(cap);
      p.set(this.pool.subarray(0, L.W * base));
      this.pool = p;
    }
    this.pool[L.W * (base + buckets) + 1] = -1; // sentinel: stops the scan for the next bucket
    this.rStart[r] = start;
    this.rWidth[r] = width;
    this.rCurStart[r] = start;
    this.rCur[r] = 0;
    this.rBase[r] = base;
    this.rEnd[r] = base + buckets;
    return base;
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

  private grow(): void {
    const cap = this.freeSlots.length * 2;
    const rec = new Float64Array(L.REC * cap);
    rec.set(this.rec);
    this.rec = rec;
    this.reci = new Int32Array(rec.buffer);
    const free = new Int32Array(cap);
    free.set(this.freeSlots);
    this.freeSlots = free;
    const top = new Int32Array(cap);
    top.set(this.topSlots);
    this.topSlots = top;
    for (let i = this.target.length; i < cap; i++) this.target.push(null);
  }
}
