import { describe, expect, it } from 'vitest';
import { Simulator } from '../../../src/sim/engine/simulator.js';
import { randomStream, type RandomStream } from '../../../src/sim/engine/random.js';
import { FlowNetwork } from '../../../src/sim/network/flowNetwork.js';
import { referenceRates } from './maxMinReference.js';

/** Records when each tagged flow finished. */
class Done {
  at = new Map<number, number>();
  calls = 0;
  constructor(private sim: Simulator) {}
  onFlowDone(tag: number): void {
    this.calls++;
    this.at.set(tag, this.sim.now);
  }
}

interface Spec {
  links: number[];
  bytes: number;
  cap?: number;
  startNs?: number;
}

/** Runs flows (started at their start times) over links of the given capacities; returns finish times by index. */
function runFlows(capacities: number[], flows: Spec[]): { finish: number[]; net: FlowNetwork; sim: Simulator } {
  const sim = new Simulator();
  const net = new FlowNetwork(sim, capacities);
  const done = new Done(sim);
  flows.forEach((f, i) => {
    const start = { onEvent: () => net.startFlow(Int32Array.from(f.links), f.bytes, done, i, f.cap) };
    sim.schedule(f.startNs ?? 0, start);
  });
  sim.run();
  return { finish: flows.map((_, i) => done.at.get(i) as number), net, sim };
}

function randomCase(rng: RandomStream, nLinks: number, nFlows: number): { caps: number[]; flows: Spec[] } {
  const caps = Array.from({ length: nLinks }, () => 1 + Math.floor(rng.next() * 20));
  const flows: Spec[] = [];
  for (let i = 0; i < nFlows; i++) {
    const len = 1 + Math.floor(rng.next() * 3);
    const links = new Set<number>();
    while (links.size < len) links.add(Math.floor(rng.next() * nLinks));
    flows.push({ links: [...links], bytes: 1000 + Math.floor(rng.next() * 1e6) });
  }
  return { caps, flows };
}

describe('flow network', () => {
  it('delivers a lone flow at the link rate, rounding the finish up to a whole ns', () => {
    expect(runFlows([10], [{ links: [0], bytes: 1e6 }]).finish).toEqual([100_000]);
    // 1000 bytes at 3 bytes/ns = 333.3 ns → done at 334.
    expect(runFlows([3], [{ links: [0], bytes: 1000 }]).finish).toEqual([334]);
  });

  it('completes an empty-route or zero-byte flow at the current time through an event', () => {
    const sim = new Simulator();
    const net = new FlowNetwork(sim, [5]);
    const done = new Done(sim);
    sim.schedule(40, {
      onEvent: () => {
        net.startFlow(new Int32Array(0), 1e9, done, 1);
        net.startFlow(Int32Array.of(0), 0, done, 2);
        expect(done.calls).toBe(0);
        expect(net.activeFlowCount).toBe(2);
      },
    });
    sim.run();
    expect([...done.at.entries()]).toEqual([
      [1, 40],
      [2, 40],
    ]);
    expect(net.activeFlowCount).toBe(0);
  });

  it('gives two flows on one link half each, then the whole link to the survivor', () => {
    // Link 1 byte/ns. A: 1000 B, B: 3000 B. Both at 0.5 until A ends at 2000; B has 2000 left at 1 B/ns → 4000.
    const { finish } = runFlows(
      [1],
      [
        { links: [0], bytes: 1000 },
        { links: [0], bytes: 3000 },
      ],
    );
    expect(finish).toEqual([2000, 4000]);
  });

  it('shares a link with a flow that arrives later', () => {
    // A (1000 B) alone until 200 (200 B sent); then 0.5 each. B (500 B) ends at 200 + 1000 = 1200, when A has
    // 800 − 500 = 300 B left at 1 B/ns → 1500.
    const { finish } = runFlows(
      [1],
      [
        { links: [0], bytes: 1000 },
        { links: [0], bytes: 500, startNs: 200 },
      ],
    );
    expect(finish).toEqual([1500, 1200]);
  });

  it('solves the classic three flows on two links', () => {
    // Link 0 cap 1 carries A and B; link 1 cap 2 carries B and C. Link 0 is the bottleneck: A = B = 0.5; C = 1.5.
    const sim = new Simulator();
    const net = new FlowNetwork(sim, [1, 2]);
    const done = new Done(sim);
    const a = net.startFlow(Int32Array.of(0), 1e6, done, 0);
    const b = net.startFlow(Int32Array.of(0, 1), 1e6, done, 1);
    const c = net.startFlow(Int32Array.of(1), 1e6, done, 2);
    sim.run(0);
    expect([net.rateOf(a), net.rateOf(b), net.rateOf(c)]).toEqual([0.5, 0.5, 1.5]);
  });

  it('fills a second level once the first bottleneck is frozen', () => {
    // l0 cap 10: f0, f2, f3; l1 cap 4: f0, f1. l1 saturates first at 2 (f0, f1); l0 then splits 8 over f2, f3.
    const sim = new Simulator();
    const net = new FlowNetwork(sim, [10, 4]);
    const done = new Done(sim);
    const ids = [[0, 1], [1], [0], [0]].map((l, i) => net.startFlow(Int32Array.from(l), 1e6, done, i));
    sim.run(0);
    expect(ids.map((id) => net.rateOf(id))).toEqual([2, 2, 4, 4]);
  });

  it('holds a capped flow at its cap and gives the rest of the link to the others', () => {
    const sim = new Simulator();
    const net = new FlowNetwork(sim, [1]);
    const done = new Done(sim);
    const capped = net.startFlow(Int32Array.of(0), 1e6, done, 0, 0.2);
    const free = net.startFlow(Int32Array.of(0), 1e6, done, 1);
    sim.run(0);
    expect(net.rateOf(capped)).toBeCloseTo(0.2, 12);
    expect(net.rateOf(free)).toBeCloseTo(0.8, 12);
    // A cap above the fair share does not bind.
    expect(
      runFlows(
        [1],
        [
          { links: [0], bytes: 1000, cap: 0.9 },
          { links: [0], bytes: 1000 },
        ],
      ).finish,
    ).toEqual([2000, 2000]);
  });

  it('matches an independent progressive-filling solver on random cases', () => {
    const rng = randomStream(7, 'maxmin');
    for (let trial = 0; trial < 30; trial++) {
      const { caps, flows } = randomCase(rng, 8, 12);
      flows.forEach((f) => (f.cap = rng.next() < 0.3 ? 0.5 + rng.next() * 5 : undefined));
      const sim = new Simulator();
      const net = new FlowNetwork(sim, caps);
      const done = new Done(sim);
      const ids = flows.map((f, i) => net.startFlow(Int32Array.from(f.links), f.bytes, done, i, f.cap));
      sim.run(0);
      const want = referenceRates(caps, flows);
      ids.forEach((id, i) => expect(net.rateOf(id)).toBeCloseTo(want[i], 9));
    }
  });

  it('solves 8,192 flows started at one instant once, with the closed-form rates', () => {
    // A ring of 8,192 links of 4 bytes/ns; flow i crosses links i and i+1, so every link carries two flows:
    // rate 2 bytes/ns each, 1 MB → 500,000 ns.
    const n = 8192;
    const sim = new Simulator();
    const net = new FlowNetwork(sim, new Float64Array(n).fill(4));
    const done = new Done(sim);
    for (let i = 0; i < n; i++) net.startFlow(Int32Array.of(i, (i + 1) % n), 1e6, done, i);
    sim.run(0);
    expect(net.solveCount).toBe(1);
    sim.run();
    expect(done.calls).toBe(n);
    expect(new Set(done.at.values())).toEqual(new Set([500_000]));
  });

  it('conserves bytes: every link carried exactly the bytes of the flows that crossed it', () => {
    const rng = randomStream(11, 'conservation');
    for (let trial = 0; trial < 10; trial++) {
      const { caps, flows } = randomCase(rng, 10, 40);
      flows.forEach((f) => (f.startNs = Math.floor(rng.next() * 50_000)));
      const { net, finish } = runFlows(caps, flows);
      expect(finish.every((t) => Number.isInteger(t))).toBe(true);
      expect(net.activeFlowCount).toBe(0);
      for (let l = 0; l < caps.length; l++) {
        const want = flows.filter((f) => f.links.includes(l)).reduce((s, f) => s + f.bytes, 0);
        expect(net.bytesDelivered(l)).toBeCloseTo(want, 3);
      }
    }
  });

  it('reports bytes in flight on a link before the flows finish', () => {
    const sim = new Simulator();
    const net = new FlowNetwork(sim, [2]);
    net.startFlow(Int32Array.of(0), 1e6, new Done(sim), 0);
    sim.run(0);
    sim.schedule(1000, { onEvent: () => expect(net.bytesDelivered(0)).toBeCloseTo(2000, 9) });
    sim.run(1000);
  });

  it('is never slower when every link gets more bandwidth', () => {
    const rng = randomStream(3, 'monotone');
    for (let trial = 0; trial < 20; trial++) {
      const { caps, flows } = randomCase(rng, 6, 10);
      const k = 1 + rng.next() * 3;
      const base = runFlows(caps, flows).finish;
      const faster = runFlows(
        caps.map((c) => c * k),
        flows,
      ).finish;
      faster.forEach((t, i) => expect(t).toBeLessThanOrEqual(base[i]));
    }
  });

  it('matches an exact fluid simulation built on the independent solver, to within rounding', () => {
    const rng = randomStream(13, 'fluid');
    for (let trial = 0; trial < 20; trial++) {
      const { caps, flows } = randomCase(rng, 6, 9);
      flows.forEach((f) => (f.cap = rng.next() < 0.3 ? 0.5 + rng.next() * 5 : undefined));
      const got = runFlows(caps, flows).finish;
      // Exact fluid reference: solve, run to the next finish, drop finished flows, repeat (real-valued time).
      const rem = flows.map((f) => f.bytes);
      const want: number[] = [];
      let open = flows.map((_, i) => i);
      let t = 0;
      while (open.length > 0) {
        const sub = open.map((i) => flows[i]);
        const r = referenceRates(caps, sub);
        const dt = Math.min(...open.map((i, k) => rem[i] / r[k]));
        t += dt;
        open.forEach((i, k) => (rem[i] -= r[k] * dt));
        for (const i of open) if (rem[i] <= 1e-9 * flows[i].bytes) want[i] = t;
        open = open.filter((i) => want[i] === undefined);
      }
      // Each completion event rounds up by under 1 ns; the others lag by at most that per event.
      got.forEach((g, i) => expect(Math.abs(g - want[i])).toBeLessThanOrEqual(flows.length));
    }
  });
});
