/** Copies `from` into the (larger) `to` and returns `to`. */
export function resized<T extends { set(array: ArrayLike<number>): void }>(from: ArrayLike<number>, to: T): T {
  to.set(from);
  return to;
}

/** Binary min-heap of (key, id) pairs in typed arrays, reused across solves. */
export class MinHeap {
  private keys = new Float64Array(256);
  private ids = new Int32Array(256);
  size = 0;

  clear(): void {
    this.size = 0;
  }

  topKey(): number {
    return this.keys[0];
  }

  topId(): number {
    return this.ids[0];
  }

  /** Adds a pair without ordering it; call `build` before any other operation. */
  append(key: number, id: number): void {
    if (this.size === this.keys.length) this.grow();
    this.keys[this.size] = key;
    this.ids[this.size++] = id;
  }

  /** Orders the appended pairs into a heap in O(n) (Floyd), cheaper than n pushes. */
  build(): void {
    for (let p = (this.size >> 1) - 1; p >= 0; p--) this.siftDown(p, this.keys[p], this.ids[p], this.size);
  }

  /** Removes the minimum and returns its id. */
  pop(): number {
    const top = this.ids[0];
    const n = --this.size;
    this.siftDown(0, this.keys[n], this.ids[n], n);
    return top;
  }

  /** Gives the minimum a new key no smaller than its old one (one sift instead of pop + push). */
  raiseTop(key: number): void {
    this.siftDown(0, key, this.ids[0], this.size);
  }

  /** Puts (key, id) at the hole `p` of a heap of `n` pairs, moving smaller children up. */
  private siftDown(p: number, key: number, id: number, n: number): void {
    const keys = this.keys;
    const ids = this.ids;
    for (;;) {
      let c = 2 * p + 1;
      if (c >= n) break;
      if (c + 1 < n && keys[c + 1] < keys[c]) c++;
      if (keys[c] >= key) break;
      keys[p] = keys[c];
      ids[p] = ids[c];
      p = c;
    }
    keys[p] = key;
    ids[p] = id;
  }

  private grow(): void {
    this.keys = resized(this.keys, new Float64Array(this.keys.length * 2));
    this.ids = resized(this.ids, new Int32Array(this.ids.length * 2));
  }
}
