import { describe, expect, it } from 'vitest';
import { Simulator } from '../../../src/sim/engine/simulator.js';
import { EventQueue } from '../../../src/sim/engine/eventQueue.js';
import { randomStream } from '../../../src/sim/engine/random.js';

class Recorder {
  log: [number, number][] = [];
  constructor(private sim: Simulator) {}
  onEvent(arg: number): void {
    this.log.push([this.sim.now, arg]);
  }
}

describe('event engine', () => {
  it('fires events in time order', () => {
    const sim = new Simulator();
    const r = new Recorder(sim);
    for (const t of [50, 10, 40, 20, 30]) sim.schedule(t, r, t);
    sim.run();
    expect(r.log.map(([t]) => t)).toEqual([10, 20, 30, 40, 50]);
  });

  it('fires simultaneous events in the order they were scheduled', () => {
    const sim = new Simulator();
    const r = new Recorder(sim);
    for (let i = 0; i < 100; i++) sim.schedule(7, r, i);
    sim.run();
    expect(r.log.map(([, a]) => a)).toEqual([...Array(100).keys()]);
  });

  it('skips a cancelled event and leaves the others', () => {
    const sim = new Simulator();
    const r = new Recorder(sim);
    sim.schedule(1, r, 1);
    const h = sim.schedule(2, r, 2);
    sim.schedule(3, r, 3);
    sim.cancel(h);
    expect(sim.pending).toBe(2);
    sim.run();
    expect(r.log.map(([, a]) => a)).toEqual([1, 3]);
  });

  it('ignores cancelling an event that already fired, even after its slot is reused', () => {
    const sim = new Simulator();
    const r = new Recorder(sim);
    const h = sim.schedule(1, r, 1);
    sim.run();
    sim.schedule(1, r, 2); // reuses the freed slot
    sim.cancel(h);
    sim.run();
    expect(r.log.map(([, a]) => a)).toEqual([1, 2]);
  });

  it('rounds delays up to whole nanoseconds and never goes back in time', () => {
    const sim = new Simulator();
    const r = new Recorder(sim);
    sim.schedule(2.2, r, 0);
    sim.run();
    sim.at(1, r, 1);
    sim.run();
    expect(r.log).toEqual([
      [3, 0],
      [3, 1],
    ]);
  });

  it('stops at the given time and resumes from there', () => {
    const sim = new Simulator();
    const r = new Recorder(sim);
    sim.schedule(5, r, 5);
    sim.schedule(15, r, 15);
    sim.run(10);
    expect(r.log.length).toBe(1);
    sim.run();
    expect(r.log.map(([t]) => t)).toEqual([5, 15]);
  });

  it('orders a large random workload exactly like a sort by (time, sequence)', () => {
    const rng = randomStream(42, 'queue-test');
    const q = new EventQueue(4);
    const target = { onEvent: () => {} };
    const pushed: { t: number; i: number }[] = [];
    for (let i = 0; i < 5000; i++) {
      const t = Math.floor(rng.next() * 100);
      q.push(t, target, i);
      pushed.push({ t, i });
    }
    pushed.sort((a, b) => a.t - b.t || a.i - b.i);
    const popped: number[] = [];
    while (q.popUntil(Infinity) !== null) popped.push(q.lastPoppedArg);
    expect(popped).toEqual(pushed.map((p) => p.i));
  });

  it('gives the same sequence for the same seed and label, and different ones for different labels', () => {
    const a = randomStream(1, 'x');
    const b = randomStream(1, 'x');
    const c = randomStream(1, 'y');
    const sa = [a.next(), a.next()];
    expect([b.next(), b.next()]).toEqual(sa);
    expect([c.next(), c.next()]).not.toEqual(sa);
  });
});
