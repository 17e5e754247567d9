/**
 * The rungs of the ladder queue in eventQueue.ts: levels of time buckets, each bucket an unsorted list of
 * event slots linked through the queue's `next` array, appended to in push order.
 *
 * Rung 0 covers [start, topStart) of the queue; each deeper rung covers the one bucket of the rung above it
 * that was split, so the rungs hold disjoint ranges of time, and a rung's buckets before its current one are
 * spent. An event goes into the shallowest rung whose current bucket starts at or before its time. Times are
 * integers and bucket widths are integers, so `floor((t - start) / width)` is exact below 2^53.
 */

/** The deepest the ladder may grow; splitting divides a bucket's width by more than SPLIT_OVER. */
const MAX_RUNGS = 32;
/** A bucket holding more events than this is split into a new rung rather than sorted. */
const SPLIT_OVER = 48;
/** The most buckets one rung may have. */
const MAX_BUCKETS = 1 << 20;
/** Events per bucket aimed at when a rung is made. */
const LOAD = 8;
/** Words per bucket in the pool: head, tail, count. */
const W = 3;

export class LadderRungs {
  /** Number of rungs in use; rung depth - 1 is the deepest. */
  depth = 0;
  /** Events in the bucket most recently returned by takeNextBucket. */
  takenCount = 0;
  private next: Int32Array;
  private time: Float64Array;
  private readonly rStart = new Float64Array(MAX_RUNGS);
  private readonly rWidth = new Float64Array(MAX_RUNGS);
  /** Start time of the rung's current bucket: events at or after it (and before the rung's end) belong here. */
  private readonly rCurStart = new Float64Array(MAX_RUNGS);
  private readonly rBuckets = new Int32Array(MAX_RUNGS);
  private readonly rCur = new Int32Array(MAX_RUNGS);
  private readonly rBase = new Int32Array(MAX_RUNGS);
  private readonly rCount = new Int32Array(MAX_RUNGS);
  /** Bucket pool shared by the rungs, W words per bucket; the rungs use [0, poolTop) as a stack. */
  private pool = new Int32Array(W * 1024);
  private poolTop = 0;

  constructor(next: Int32Array, time: Float64Array) {
    this.next = next;
    this.time = time;
  }

  setSlotArrays(next: Int32Array, time: Float64Array): void {
    this.next = next;
    this.time = time;
  }

  canSpawn(): boolean {
    return this.depth > 0 && this.depth < MAX_RUNGS;
  }

  /** Puts the event into the shallowest rung that covers time `t`; false when `t` is before every rung. */
  insert(slot: number, t: number): boolean {
    const depth = this.depth;
    const rCurStart = this.rCurStart;
    for (let r = 0; r < depth; r++) {
      if (t >= rCurStart[r]) {
        this.append(this.rBase[r] + Math.floor((t - this.rStart[r]) / this.rWidth[r]), slot);
        this.rCount[r]++;
        return true;
      }
    }
    return false;
  }

  private append(b: number, slot: number): void {
    const pool = this.pool;
    const i = W * b;
    this.next[slot] = -1;
    if (pool[i + 2] === 0) pool[i] = slot;
    else this.next[pool[i + 1]] = slot;
    pool[i + 1] = slot;
    pool[i + 2]++;
  }

  /**
   * Makes rung 0 from the list of `count` events starting at `head`, whose times lie in [min, max].
   * Returns the end of its range, the queue's new topStart.
   */
  spawnFromList(head: number, count: number, min: number, max: number): number {
    const nb = Math.min(Math.ceil(count / LOAD), MAX_BUCKETS);
    const width = Math.floor((max - min) / nb) + 1;
    this.newRung(min, width, nb);
    this.distributeList(head);
    return min + nb * width;
  }

  /**
   * Makes a rung below the deepest from the sorted slots `slots[from..to)`, covering from `lo` to the
   * deepest rung's current bucket, which must bound every one of them.
   */
  spawnFromSorted(slots: Int32Array, from: number, to: number, lo: number): void {
    const hi = this.rCurStart[this.depth - 1];
    const span = hi - lo;
    const width = Math.ceil(span / Math.min(to - from, MAX_BUCKETS));
    const r = this.newRung(lo, width, Math.ceil(span / width));
    const time = this.time;
    for (let k = from; k < to; k++) {
      const s = slots[k];
      this.append(this.rBase[r] + Math.floor((time[s] - lo) / width), s);
    }
    this.rCount[r] = to - from;
  }

  /**
   * Takes the next non-empty bucket of the deepest rung and returns the head of its list, with its size in
   * `takenCount`. Returns -1 when the deepest rung was empty (it is removed) and -2 when the bucket was
   * too full and has been split into a new rung instead.
   */
  takeNextBucket(): number {
    const r = this.depth - 1;
    if (this.rCount[r] === 0) {
      this.depth = r;
      this.poolTop = this.rBase[r];
      return -1;
    }
    const pool = this.pool;
    const base = this.rBase[r];
    let b = this.rCur[r];
    while (pool[W * (base + b) + 2] === 0) b++;
    const i = W * (base + b);
    const head = pool[i];
    const count = pool[i + 2];
    pool[i + 2] = 0;
    const width = this.rWidth[r];
    const bucketStart = this.rStart[r] + b * width;
    this.rCur[r] = b + 1;
    this.rCurStart[r] = bucketStart + width;
    this.rCount[r] -= count;
    if (count > SPLIT_OVER && width > 1 && this.depth < MAX_RUNGS) {
      const nb = Math.min(Math.ceil(count / LOAD), MAX_BUCKETS);
      const w = Math.ceil(width / nb);
      this.newRung(bucketStart, w, Math.ceil(width / w));
      this.distributeList(head);
      return -2;
    }
    this.takenCount = count;
    return head;
  }

  /** Pushes an empty rung below the deepest; returns its index. */
  private newRung(start: number, width: number, buckets: number): number {
    const r = this.depth++;
    const base = this.poolTop;
    if (W * (base + buckets) > this.pool.length) {
      let cap = this.pool.length * 2;
      while (cap < W * (base + buckets)) cap *= 2;
      const p = new Int32Array(cap);
      p.set(this.pool.subarray(0, W * base));
      this.pool = p;
    }
    this.poolTop = base + buckets;
    this.rStart[r] = start;
    this.rWidth[r] = width;
    this.rCurStart[r] = start;
    this.rBuckets[r] = buckets;
    this.rCur[r] = 0;
    this.rBase[r] = base;
    this.rCount[r] = 0;
    return r;
  }

  /** Moves a list, in order, into the buckets of the deepest rung. */
  private distributeList(head: number): void {
    const r = this.depth - 1;
    const start = this.rStart[r];
    const width = this.rWidth[r];
    const base = this.rBase[r];
    const time = this.time;
    const next = this.next;
    let n = 0;
    for (let s = head; s >= 0; ) {
      const following = next[s];
      this.append(base + Math.floor((time[s] - start) / width), s);
      s = following;
      n++;
    }
    this.rCount[r] = n;
  }
}
