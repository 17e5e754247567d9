import { describe, expect, it } from 'vitest';
import { Simulator, type EventTarget } from '../../../src/sim/engine/simulator.js';
import { randomStream } from '../../../src/sim/engine/random.js';

/** The engine's contract written plainly: an array kept sorted by (time, scheduling order). */
class ReferenceSim {
  now = 0;
  eventsFired = 0;
  private items: { t: number; seq: number; target: EventTarget; arg: number }[] = [];
  private seq = 0;
  get pending(): number {
    return this.items.length;
  }
  schedule(delayNs: number, target: EventTarget, arg = 0): number {
    return this.insert(this.now + (delayNs > 0 ? Math.ceil(delayNs) : 0), target, arg);
  }
  at(timeNs: number, target: EventTarget, arg = 0): number {
    return this.insert(timeNs > this.now ? Math.ceil(timeNs) : this.now, target, arg);
  }
  cancel(handle: number): void {
    const i = this.items.findIndex((e) => e.seq === handle);
    if (i >= 0) this.items.splice(i, 1);
  }
  run(untilNs = Infinity): number {
    while (this.items.length > 0 && this.items[0].t <= untilNs) {
      const e = this.items.shift()!;
      this.now = e.t;
      this.eventsFired++;
      e.target.onEvent(e.arg);
    }
    return this.now;
  }
  private insert(t: number, target: EventTarget, arg: number): number {
    let i = this.items.length;
    while (i > 0 && this.items[i - 1].t > t) i--;
    this.items.splice(i, 0, { t, seq: this.seq, target, arg });
    return this.seq++;
  }
}

type Sim = Pick<ReferenceSim, 'now' | 'eventsFired' | 'pending' | 'schedule' | 'at' | 'cancel' | 'run'>;

/**
 * Components that, when they fire, log (now, id), schedule more events (delays with ties, fractions, zero,
 * the odd huge one), use `at` with past and future times, and cancel pending and fired events. The whole run
 * is driven by run(until) steps. Any difference in order changes every later random draw, so comparing the
 * logs compares the order exactly.
 */
function scenario(sim: Sim, seed: number): string[] {
  const rng = randomStream(seed, 'simulator-order');
  const log: string[] = [];
  const handles: number[] = [];
  let nextId = 0;
  const delay = () => {
    const r = rng.next();
    if (r < 0.3) return Math.floor(rng.next() * 4);
    if (r < 0.4) return rng.next() * 10; // fractional: rounded up
    if (r < 0.98) return Math.floor(rng.next() * 10_000);
    return Math.floor(rng.next() * 1e12);
  };
  const target: EventTarget = {
    onEvent(arg: number): void {
      log.push(`${sim.now}:${arg}`);
      const n = Math.floor(rng.next() * 3.2);
      for (let i = 0; i < n && nextId < 4000; i++) {
        const id = nextId++;
        handles[id] = rng.next() < 0.1 ? sim.at(sim.now + delay() - 50, target, id) : sim.schedule(delay(), target, id);
      }
      if (rng.next() < 0.1 && nextId > 0) sim.cancel(handles[Math.floor(rng.next() * nextId)]);
    },
  };
  for (let i = 0; i < 300; i++) handles[nextId] = sim.schedule(delay(), target, nextId++);
  while (sim.pending > 0) {
    const until = rng.next() < 0.1 ? Infinity : sim.now + Math.floor(rng.next() * 3000);
    log.push(`run(${until}) -> ${sim.run(until)} fired ${sim.eventsFired} pending ${sim.pending}`);
  }
  return log;
}

describe('simulator event order', () => {
  it('matches a plain sorted-list simulator on random workloads with ties, cancels and run(until) steps', () => {
    for (let seed = 1; seed <= 4; seed++) {
      const got = scenario(new Simulator(), seed);
      const want = scenario(new ReferenceSim(), seed);
      expect(got.length).toBeGreaterThan(3000);
      expect(got).toEqual(want);
    }
  });
});
