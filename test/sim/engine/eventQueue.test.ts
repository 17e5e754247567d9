import { describe, expect, it } from 'vitest';
import { EventQueue, type EventHandle } from '../../../src/sim/engine/eventQueue.js';
import { randomStream, type RandomStream } from '../../../src/sim/engine/random.js';

const target = { onEvent: () => {} };

/** Reference queue: an array kept sorted by (time, sequence), with cancelled events removed at once. */
class Reference {
  private items: { t: number; seq: number; id: number }[] = [];
  private seq = 0;
  push(t: number, id: number): void {
    const e = { t, seq: this.seq++, id };
    let lo = 0;
    let hi = this.items.length;
    while (lo < hi) {
      const m = (lo + hi) >> 1;
      if (this.items[m].t <= t) lo = m + 1;
      else hi = m;
    }
    this.items.splice(lo, 0, e);
  }
  cancel(id: number): void {
    const i = this.items.findIndex((e) => e.id === id);
    if (i >= 0) this.items.splice(i, 1);
  }
  pop(until: number): { t: number; id: number } | undefined {
    if (this.items.length === 0 || this.items[0].t > until) return undefined;
    return this.items.shift();
  }
  get size(): number {
    return this.items.length;
  }
}

type Delay = (rng: RandomStream) => number;

const delays: Record<string, Delay> = {
  'uniform, many ties': (r) => Math.floor(r.next() * 8),
  'uniform wide': (r) => 1 + Math.floor(r.next() * 1_000_000),
  exponential: (r) => Math.floor(-Math.log(1 - r.next()) * 1000),
  'bimodal tiny and huge': (r) => (r.next() < 0.9 ? Math.floor(r.next() * 3) : Math.floor(r.next() * 2 ** 40)),
  'mostly zero': (r) => (r.next() < 0.95 ? 0 : Math.floor(r.next() * 100)),
  'powers of two': (r) => 2 ** Math.floor(r.next() * 41),
};

/**
 * Drives the queue and the reference with the same random operations: pushes at now + delay, pops bounded
 * by a random `until`, cancels of pending and of already-fired events, and compares every pop.
 */
function compare(seed: number, delay: Delay, steps: number, startBurst: number): void {
  const rng = randomStream(seed, 'event-queue-test');
  const q = new EventQueue(4);
  const ref = new Reference();
  const handles: EventHandle[] = [];
  const firedHandles: EventHandle[] = [];
  let now = 0;
  let id = 0;
  const push = (t: number) => {
    expect(t).toBeLessThan(2 ** 53); // times are exact integers below 2^53
    handles[id] = q.push(t, target, id);
    ref.push(t, id);
    id++;
  };
  for (let i = 0; i < startBurst; i++) push(now + delay(rng));
  for (let step = 0; step < steps; step++) {
    const op = rng.next();
    if (op < 0.45) {
      push(now + delay(rng));
    } else if (op < 0.5 && id > 0) {
      const victim = Math.floor(rng.next() * id);
      q.cancel(handles[victim]);
      ref.cancel(victim);
    } else if (op < 0.52 && firedHandles.length > 0) {
      q.cancel(firedHandles[Math.floor(rng.next() * firedHandles.length)]); // must be a no-op
    } else {
      const until = rng.next() < 0.2 ? now + delay(rng) : Infinity;
      const popped = q.popUntil(until);
      const want = ref.pop(until);
      if (want === undefined) {
        expect(popped).toBeNull();
        continue;
      }
      expect(popped).toBe(target);
      const got = q.lastPoppedArg;
      expect([q.lastPoppedTimeNs, got]).toEqual([want.t, want.id]);
      firedHandles.push(handles[got]);
      now = want.t;
    }
    expect(q.size).toBe(ref.size);
  }
  for (;;) {
    const popped = q.popUntil(Infinity);
    const want = ref.pop(Infinity);
    if (want === undefined) {
      expect(popped).toBeNull();
      break;
    }
    expect([q.lastPoppedTimeNs, q.lastPoppedArg]).toEqual([want.t, want.id]);
  }
  expect(q.size).toBe(0);
}

describe('event queue (ladder)', () => {
  for (const [name, delay] of Object.entries(delays)) {
    it(`pops like a sort by (time, sequence): ${name}`, () => {
      for (let seed = 1; seed <= 3; seed++) compare(seed, delay, 6000, seed === 1 ? 0 : 3000);
    });
  }

  it('keeps push order among many simultaneous events while earlier ones are inserted', () => {
    const q = new EventQueue();
    const ref = new Reference();
    let id = 0;
    for (let i = 0; i < 2000; i++) {
      q.push(1000, target, id);
      ref.push(1000, id++);
    }
    expect(q.peekTimeNs()).toBe(1000); // the 2000 events now sit in the bottom
    const rng = randomStream(7, 'spill');
    for (let i = 0; i < 3000; i++) {
      const t = 1000 - 1 - Math.floor(rng.next() * 999); // before them: spills the bottom into a rung
      q.push(t, target, id);
      ref.push(t, id++);
      q.push(1000, target, id);
      ref.push(1000, id++);
    }
    const popped: number[] = [];
    const want: number[] = [];
    while (q.popUntil(Infinity) !== null) {
      popped.push(q.lastPoppedArg);
      want.push(ref.pop(Infinity)!.id);
    }
    expect(popped).toEqual(want);
  });

  it('sorts a crowded bucket with few distinct times, and splits a crowded wide one', () => {
    const rng = randomStream(11, 'crowded');
    const q = new EventQueue();
    const ref = new Reference();
    let id = 0;
    const push = (t: number) => {
      q.push(t, target, id);
      ref.push(t, id++);
    };
    push(1e9); // stretches rung 0 so that everything below lands in its first bucket
    for (let i = 0; i < 5000; i++) push(Math.floor(rng.next() * 100));
    for (let i = 0; i < 3000; i++) push(200 + Math.floor(rng.next() * 1e6));
    const popped: number[] = [];
    const want: number[] = [];
    while (q.popUntil(Infinity) !== null) {
      popped.push(q.lastPoppedArg);
      want.push(ref.pop(Infinity)!.id);
      if (popped.length % 7 === 0) push(q.lastPoppedTimeNs + Math.floor(rng.next() * 50)); // ties with the crowd
    }
    expect(popped).toEqual(want);
  });

  it('keeps times at or beyond 2^53, and Infinity, in order after all others', () => {
    const q = new EventQueue();
    const ref = new Reference();
    const times = [Infinity, 2 ** 60, 5, 2 ** 53, Infinity, 2 ** 60, 2 ** 53 - 1, 7, 2 ** 70, 5];
    const handles = times.map((t, i) => {
      ref.push(t, i);
      return q.push(t, target, i);
    });
    q.cancel(handles[5]);
    ref.cancel(5);
    const popped: number[] = [];
    const want: number[] = [];
    let pushedLate = false;
    while (q.popUntil(Infinity) !== null) {
      popped.push(q.lastPoppedArg);
      want.push(ref.pop(Infinity)!.id);
      const t = q.lastPoppedTimeNs;
      if (t === 2 ** 53 && !pushedLate) {
        // pushed while the far events are the bottom: they sort in among them
        pushedLate = true;
        for (const [dt, id] of [
          [4, 100],
          [0, 101],
          [2 ** 62, 102],
        ]) {
          q.push(t + dt, target, id);
          ref.push(t + dt, id);
        }
      }
    }
    expect(popped).toEqual(want);
    expect(q.size).toBe(0);
    q.push(3, target, 200); // and the ladder works again afterwards
    q.push(1, target, 201);
    q.popUntil(Infinity);
    expect(q.lastPoppedArg).toBe(201);
  });

  it('handles times near 2^53', () => {
    const q = new EventQueue();
    const times = [2 ** 53 - 1, 0, 2 ** 53 - 2, 2 ** 52 + 1, 2 ** 52, 1, 2 ** 53 - 1, 3];
    times.forEach((t, i) => q.push(t, target, i));
    const popped: number[] = [];
    while (q.popUntil(Infinity) !== null) {
      popped.push(q.lastPoppedArg);
    }
    const want = times.map((t, i) => ({ t, i })).sort((a, b) => a.t - b.t || a.i - b.i);
    expect(popped).toEqual(want.map((w) => w.i));
  });

  it('drops cancelled events from peek and size, and can be reused after emptying', () => {
    const q = new EventQueue();
    const a = q.push(5, target, 1);
    q.push(9, target, 2);
    q.cancel(a);
    q.cancel(a);
    expect(q.size).toBe(1);
    expect(q.peekTimeNs()).toBe(9);
    expect(q.popUntil(8)).toBeNull();
    expect(q.popUntil(9)).toBe(target);
    expect(q.lastPoppedArg).toBe(2);
    expect(q.peekTimeNs()).toBe(Infinity);
    q.push(3, target, 3);
    q.popUntil(Infinity);
    expect(q.lastPoppedArg).toBe(3);
  });

  it('pops a target with its time and arg through popUntil', () => {
    const q = new EventQueue();
    const other = { onEvent: () => {} };
    q.push(4, target, 7);
    q.push(4, other, 8);
    expect(q.popUntil(3)).toBe(null);
    expect(q.popUntil(4)).toBe(target);
    expect([q.lastPoppedTimeNs, q.lastPoppedArg]).toEqual([4, 7]);
    expect(q.popUntil(Infinity)).toBe(other);
    expect(q.lastPoppedArg).toBe(8);
    expect(q.popUntil(Infinity)).toBe(null);
    expect(q.size).toBe(0);
  });
});
