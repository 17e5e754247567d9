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

  push(key: number, id: number): void {
    if (this.size === this.keys.length) {
      this.keys = resized(this.keys, new Float64Array(this.size * 2));
      this.ids = resized(this.ids, new Int32Array(this.size * 2));
    }
    let p = this.size++;
    while (p > 0) {
      const parent = (p - 1) >> 1;
      if (this.keys[parent] <= key) break;
      this.keys[p] = this.keys[parent];
      this.ids[p] = this.ids[parent];
      p = parent;
    }
    this.keys[p] = key;
    this.ids[p] = id;
  }

  /** Removes the minimum and returns its id. */
  pop(): number {
    const top = this.ids[0];
    const n = --this.size;
    const key = this.keys[n];
    const id = this.ids[n];
    let p = 0;
    for (;;) {
      let c = 2 * p + 1;
      if (c >= n) break;
      if (c + 1 < n && this.keys[c + 1] < this.keys[c]) c++;
      if (this.keys[c] >= key) break;
      this.keys[p] = this.keys[c];
      this.ids[p] = this.ids[c];
      p = c;
    }
    this.keys[p] = key;
    this.ids[p] = id;
    return top;
  }
}
