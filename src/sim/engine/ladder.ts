/**
 * The top, the rungs and the slow paths of the ladder queue behind EventQueue (after Tang, Goh & Thng, "Ladder
 * Queue", ACM TOMACS 2005), over the Bottom (bottom.ts) it shares with EventQueue (eventQueue.ts), which holds the
 * hot paths, kept small so that V8 inlines them.
 *
 * Tiers holding disjoint ranges of time, earliest last:
 *   - top: the events at or after `topStart` (0 while there is no rung), unsorted, in push order;
 *   - rungs: levels of time buckets. Rung 0 covers [its start, topStart); each deeper rung covers the one
 *     bucket of the rung above that was split because it held too many events. A rung's buckets before
 *     its current one are spent; an event goes into the shallowest rung whose current bucket starts at or
 *     before its time;
 *   - bottom (bottom.ts): a sorted array of the next events, all before the deepest rung's current bucket.
 * Events at 2^53 ns or later wait in the far list (bottom.ts) until everything else is gone.
 * When the bottom runs dry, the deepest rung's next buckets are sorted into it; the top becomes a new rung 0
 * once the rungs are spent. Each event is so touched O(1) times on average, where a heap does O(log n) work.
 *
 * No sequence number is stored: every move keeps push order and every sort is stable, so among events of
 * equal time the order is always push order. Times are integers below 2^53 and bucket widths powers of
 * two, so the bucket index `floor((t - start) * (1 / width))` is exact (`| 0` floors it: it is below 2^31).
 * Methods called every few events take no floating-point arguments, which a call that V8 does not inline
 * would box (allocate).
 */

import { L, type Bottom } from './bottom.js';

/** Deepest ladder; a split divides a bucket's width by at least 8, so 2^53 needs fewer than 18. */
const MAX_RUNGS = 32;
/** A bucket holding more events than this is sorted by counting or split into a new rung. */
const SPLIT_OVER = 48;
/** Events per bucket aimed at when a rung is made. */
const LOAD = 2;
/** Rung 0 spans up to this many times the top's span, as long as it has at most REACH_BUCKETS buckets. */
const TOP_REACH = 4;
const REACH_BUCKETS = 1 << 14;
/** The most buckets one rung may have. */
const MAX_BUCKETS = 1 << 20;
/** A refill moves buckets into the bottom until it holds this many events. */
const REFILL_MIN = 8;
/** A bottom this large that would take an insertion far from its end is spilled into a new rung. */
const BOTTOM_SPILL = 256;

/** The smallest power of two at or above x (1 for x <= 1). */
function pow2AtLeast(x: number): number {
  if (x <= 1) return 1;
  let w = 2 ** Math.ceil(Math.log2(x));
  if (w / 2 >= x) w /= 2;
  return w < x ? 2 * w : w;
}

/** The top and the rungs over a Bottom that it shares with the queue (eventQueue.ts). */
export class Ladder {
  // Top: [time, slot] pairs in push order (as many places as there are slots).
  topStart = -0; // -0: see Bottom.poppedTimeNs
  top: Float64Array;
  topCount = 0;
  topMin = Infinity;
  topMax = -Infinity;
  // Rungs: per-rung parameters; their buckets are in the pool (bottom.ts), used as a stack.
  depth = 0;
  readonly rStart = new Float64Array(MAX_RUNGS);
  readonly rWidth = new Float64Array(MAX_RUNGS);
  /** 1 / width: widths are powers of two, so `(t - start) * inv` is exact and needs no division. */
  readonly rInv = new Float64Array(MAX_RUNGS);
  /** Start time of the rung's current bucket. */
  readonly rCurStart = new Float64Array(MAX_RUNGS);
  readonly rCur = new Int32Array(MAX_RUNGS);
  readonly rBase = new Int32Array(MAX_RUNGS);
  readonly rEnd = new Int32Array(MAX_RUNGS);
  // Rung 0's start, 1 / width and current bucket start, as plain fields for push (lo is Infinity without rungs).
  r0Start = -0;
  r0Inv = 0.5;
  r0Lo = Infinity;

  constructor(private readonly s: Bottom) {
    this.top = new Float64Array(0);
  }

  /** Grows the top to hold `cap` slots' events (after the bottom's slots grew to `cap`). */
  growTop(cap: number): void {
    const top = new Float64Array(2 * cap);
    top.set(this.top);
    this.top = top;
  }

  /** Files an event before topStart into the shallowest rung that covers it, else into the bottom. */
  insertBelowTop(slot: number): void {
    const s = this.s;
    const t = s.rec[L.REC * slot];
    for (let r = 0; r < this.depth; r++) {
      if (t >= this.rCurStart[r]) {
        s.addToBucket(L.W * (this.rBase[r] + (((t - this.rStart[r]) * this.rInv[r]) | 0)), slot);
        return;
      }
    }
    const n = s.bEnd - s.bHead;
    if (n >= BOTTOM_SPILL && s.bTime[s.bEnd - 16] > t && this.depth > 0 && this.depth < MAX_RUNGS) {
      // Many later events would shift: turn the bottom into a rung covering it, then file the event there.
      const lo = Math.min(t, s.bTime[s.bHead]);
      const span = this.rCurStart[this.depth - 1] - lo;
      const width = pow2AtLeast(span / Math.min(Math.ceil(n / LOAD), MAX_BUCKETS));
      const base = this.newRung(lo, width, Math.ceil(span / width));
      for (let k = s.bHead; k < s.bEnd; k++) {
        s.addToBucket(L.W * (base + Math.floor((s.bTime[k] - lo) / width)), s.bSlot[k]);
      }
      s.bHead = s.bEnd = 0;
      s.addToBucket(L.W * (base + Math.floor((t - lo) / width)), slot);
      return;
    }
    s.insertIntoBottom(slot);
  }

  /** Drops cancelled events and refills the bottom until a live event is at its front; false when empty. */
  front(): boolean {
    const s = this.s;
    for (;;) {
      while (s.bHead < s.bEnd) {
        const slot = s.bSlot[s.bHead];
        if (s.target[slot] !== null) return true;
        s.bHead++;
        s.freeSlot(slot);
      }
      if (!this.refill()) return false;
    }
  }

  /** Moves the next buckets of the ladder into the empty bottom; false when no event is left. */
  private refill(): boolean {
    const s = this.s;
    s.bHead = s.bEnd = 0;
    for (;;) {
      if (this.depth === 0 && !this.spawnFromTop()) {
        if (s.farCount === 0) return false;
        // Only far events are left: they become the bottom, and until it drains every push sorts into it.
        s.drainFar();
        this.topStart = Infinity;
        return true;
      }
      const pool = s.pool; // newRung may replace it
      const r = this.depth - 1;
      let i = L.W * (this.rBase[r] + this.rCur[r]);
      while (pool[i] === 0) i += L.W;
      const count = pool[i];
      const b = i / L.W - this.rBase[r];
      const width = this.rWidth[r];
      const bucketStart = this.rStart[r] + b * width;
      this.setCurrent(r, b);
      if (count < 0) {
        // The rung is spent: drop it, unless the bottom has events (it then bounds them).
        if (s.bEnd > 0) return true;
        pool[i] = 0;
        this.depth = r;
        if (r === 0) this.r0Lo = Infinity;
        continue;
      }
      const large = count > SPLIT_OVER && width > 1;
      if (large && s.bEnd > 0) return true;
      pool[i] = 0;
      this.setCurrent(r, b + 1);
      if (large && width <= 4 * count) {
        s.countingSort(i, count, bucketStart, width); // few distinct times: beats insertion sort and a split
        return true;
      }
      if (large && this.depth < MAX_RUNGS) {
        this.splitBucket(i, count, b, r);
        continue;
      }
      s.appendBucketToBottom(i, count);
      if (s.bEnd >= REFILL_MIN) return true;
    }
  }

  /** Makes rung 0 from the top; false when the top is empty too. */
  private spawnFromTop(): boolean {
    const s = this.s;
    const count = this.topCount;
    if (count === 0) {
      this.topStart = 0;
      return false;
    }
    const min = this.topMin;
    const width = pow2AtLeast((this.topMax - min + 1) / Math.min(Math.ceil(count / LOAD), MAX_BUCKETS));
    // While its buckets fit in a cache, rung 0 reaches past the top's span, so that more later pushes land
    // in it directly (and the push's branch between top and rung 0 is predictable).
    const need = Math.floor((this.topMax - min) / width) + 1;
    const nb = Math.max(need, Math.min(TOP_REACH * need, REACH_BUCKETS));
    this.topStart = Math.min(min + nb * width, L.FAR); // far events never enter the ladder
    this.newRung(min, width, nb);
    this.topCount = 0;
    this.topMin = Infinity;
    this.topMax = -Infinity;
    const inv = 1 / width;
    const top = this.top;
    for (let k = 0; k < 2 * count; k += 2) s.addToBucket(L.W * (((top[k] - min) * inv) | 0), top[k + 1]);
    return true;
  }

  /** Moves the events of bucket `b` of rung `r` (at pool word `i`) into a new rung below the deepest. */
  private splitBucket(i: number, count: number, b: number, r: number): void {
    const s = this.s;
    const width = this.rWidth[r];
    const start = this.rStart[r] + b * width;
    const list = s.gatherBucket(i, count);
    const w = pow2AtLeast(width / Math.min(Math.ceil(count / LOAD), MAX_BUCKETS));
    const base = this.newRung(start, w, width / w);
    const inv = 1 / w;
    for (let n = 0; n < count; n++) {
      const slot = list[n];
      s.addToBucket(L.W * (base + (((s.rec[L.REC * slot] - start) * inv) | 0)), slot);
    }
  }

  /** Pushes an empty rung of `buckets` buckets below the deepest; returns its first bucket in the pool. */
  private newRung(start: number, width: number, buckets: number): number {
    const s = this.s;
    const r = this.depth++;
    const base = r === 0 ? 0 : this.rEnd[r - 1] + 1;
    s.reservePool(L.W * (base + buckets + 1));
    s.pool[L.W * (base + buckets)] = -1; // sentinel: stops the scan for the next bucket
    this.rStart[r] = start;
    this.rWidth[r] = width;
    this.rInv[r] = 1 / width;
    this.rBase[r] = base;
    this.rEnd[r] = base + buckets;
    if (r === 0) {
      this.r0Start = start;
      this.r0Inv = 1 / width;
    }
    this.setCurrent(r, 0);
    return base;
  }

  /** Makes bucket `b` the current bucket of rung `r`. */
  private setCurrent(r: number, b: number): void {
    const start = this.rStart[r] + b * this.rWidth[r];
    this.rCur[r] = b;
    this.rCurStart[r] = start;
    if (r === 0) this.r0Lo = start;
  }
}
