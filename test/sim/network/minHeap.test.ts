import { describe, expect, it } from 'vitest';
import { MinHeap } from '../../../src/sim/network/minHeap.js';
import { randomStream } from '../../../src/sim/engine/random.js';

describe('MinHeap', () => {
  it('pops in key order after build and raiseTop, as a sorted list does', () => {
    const rng = randomStream(5, 'heap');
    for (let trial = 0; trial < 20; trial++) {
      const heap = new MinHeap();
      const ref: [number, number][] = [];
      const n = 1 + Math.floor(rng.next() * 600);
      for (let i = 0; i < n; i++) {
        const key = Math.floor(rng.next() * 50);
        heap.append(key, i);
        ref.push([key, i]);
      }
      heap.build();
      const popped: number[] = [];
      while (heap.size > 0) {
        const r = rng.next();
        if (r < 0.3) {
          // Raise the minimum by some amount, as a stale lower bound is corrected.
          const key = heap.topKey() + Math.floor(rng.next() * 20);
          const id = heap.topId();
          heap.raiseTop(key);
          ref.find((e) => e[1] === id)![0] = key;
        } else {
          const key = heap.topKey();
          const min = Math.min(...ref.map((e) => e[0]));
          expect(key).toBe(min);
          const id = heap.pop();
          const at = ref.findIndex((e) => e[1] === id);
          expect(ref[at][0]).toBe(min);
          ref.splice(at, 1);
          popped.push(key);
        }
      }
      expect(ref).toEqual([]);
    }
  });
});
