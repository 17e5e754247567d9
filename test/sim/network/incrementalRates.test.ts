import { describe, expect, it } from 'vitest';
import { Simulator } from '../../../src/sim/engine/simulator.js';
import { randomStream, type RandomStream } from '../../../src/sim/engine/random.js';
import { FlowNetwork } from '../../../src/sim/network/flowNetwork.js';
import { referenceRates } from './maxMinReference.js';

interface Flow {
  links: number[];
  bytes: number;
  cap: number;
  startNs: number;
}

/**
 * A workload shaped like a training step: a few long "all-reduce" flows on shared links, and many short
 * transfers that start and end beside them, some crossing the same links.
 */
function randomWorkload(rng: RandomStream, nLinks: number, nFlows: number): { caps: number[]; flows: Flow[] } {
  const caps = Array.from({ length: nLinks }, () => 1 + Math.floor(rng.next() * 20));
  const flows: Flow[] = [];
  for (let i = 0; i < nFlows; i++) {
    const long = i < nFlows / 4;
    const len = 1 + Math.floor(rng.next() * 3);
    const links = new Set<number>();
    while (links.size < len) links.add(Math.floor(rng.next() * nLinks));
    flows.push({
      links: [...links],
      bytes: long ? 1e6 + Math.floor(rng.next() * 1e6) : 1000 + Math.floor(rng.next() * 2e4),
      cap: rng.next() < 0.25 ? 0.5 + rng.next() * 5 : Infinity,
      // Short flows start in groups at a few instants, as the transfers of one pipeline step do.
      startNs: long ? 0 : 1000 * Math.floor(rng.next() * 40),
    });
  }
  return { caps, flows };
}

/** Runs the workload, stopping at every start time and some times between to compare all rates. */
function checkAgainstReference(caps: number[], flows: Flow[]): { solves: number; fullSolves: number; checks: number } {
  const sim = new Simulator();
  const net = new FlowNetwork(sim, caps);
  const ids = new Array<number>(flows.length).fill(-1);
  const done = new Set<number>();
  const listener = { onFlowDone: (tag: number) => done.add(tag) };
  flows.forEach((f, i) =>
    sim.schedule(f.startNs, {
      onEvent: () => (ids[i] = net.startFlow(Int32Array.from(f.links), f.bytes, listener, i, f.cap)),
    }),
  );
  const stops = [...new Set(flows.flatMap((f) => [f.startNs, f.startNs + 500, f.startNs + 2500]))].sort(
    (a, b) => a - b,
  );
  let checks = 0;
  for (const t of stops) {
    sim.run(t);
    const live = flows.map((_, i) => i).filter((i) => ids[i] >= 0 && !done.has(i));
    const want = referenceRates(
      caps,
      live.map((i) => flows[i]),
    );
    live.forEach((i, k) => expect(net.rateOf(ids[i])).toBeCloseTo(want[k], 9));
    checks += live.length;
  }
  sim.run();
  expect(done.size).toBe(flows.length);
  return { solves: net.solveCount, fullSolves: net.fullSolveCount, checks };
}

describe('rates after each change (incremental and full solves)', () => {
  it('are the max-min fair rates of the flows then active, on random step-like workloads', () => {
    const rng = randomStream(21, 'incremental');
    let solves = 0;
    let fullSolves = 0;
    for (let trial = 0; trial < 25; trial++) {
      const { caps, flows } = randomWorkload(rng, 10, 36);
      const r = checkAgainstReference(caps, flows);
      expect(r.checks).toBeGreaterThan(0);
      solves += r.solves;
      fullSolves += r.fullSolves;
    }
    // Both paths ran: the check above covered rates set without a full solve.
    expect(fullSolves).toBeGreaterThan(0);
    expect(fullSolves).toBeLessThan(solves);
  });

  it(
    'rate new flows beside a flow bottlenecked elsewhere without re-solving, ' +
      'and re-solve when they take its share',
    () => {
      // l0 (cap 10) carries the long flow A, bottlenecked on l1 (cap 2). B joins on l0 alone: A keeps 2, B gets 8.
      const sim = new Simulator();
      const net = new FlowNetwork(sim, [10, 2, 10]);
      const noop = { onFlowDone: () => {} };
      const a = net.startFlow(Int32Array.of(0, 1), 1e9, noop, 0);
      sim.run(0);
      // Even the first flow is rated without a full solve: it joins an empty network.
      expect(net.fullSolveCount).toBe(0);
      let b = -1;
      sim.schedule(100, { onEvent: () => (b = net.startFlow(Int32Array.of(0), 1e9, noop, 1)) });
      sim.run(100);
      expect(net.fullSolveCount).toBe(0);
      expect([net.rateOf(a), net.rateOf(b)]).toEqual([2, 8]);
      // C and D join on l2 together: they split it evenly (5 each), still without touching A.
      let c = -1;
      let d = -1;
      sim.schedule(0, {
        onEvent: () => (
          (c = net.startFlow(Int32Array.of(2), 1e9, noop, 2)),
          (d = net.startFlow(Int32Array.of(2, 0), 1e9, noop, 3))
        ),
      });
      sim.run(100);
      // D also crosses l0, where B had taken all the spare capacity: that needs the full solve.
      expect(net.fullSolveCount).toBe(1);
      const want = referenceRates(
        [10, 2, 10],
        [
          { links: [0, 1], cap: Infinity },
          { links: [0], cap: Infinity },
          { links: [2], cap: Infinity },
          { links: [2, 0], cap: Infinity },
        ],
      );
      [a, b, c, d].forEach((id, i) => expect(net.rateOf(id)).toBeCloseTo(want[i], 12));
    },
  );

  it('let the others rise when a flow that was their bottleneck share leaves', () => {
    // A and B share l0 (cap 4): 2 each. B ends first; A must rise to 4 (a full solve), not keep 2.
    const sim = new Simulator();
    const net = new FlowNetwork(sim, [4]);
    const at = new Map<number, number>();
    const listener = { onFlowDone: (tag: number) => at.set(tag, sim.now) };
    net.startFlow(Int32Array.of(0), 8000, listener, 0);
    net.startFlow(Int32Array.of(0), 2000, listener, 1);
    sim.run();
    // B: 2000 B at 2 B/ns → 1000 ns; A: 2000 B by then, 6000 B left at 4 B/ns → 1500 ns more.
    expect([at.get(1), at.get(0)]).toEqual([1000, 2500]);
  });
});

describe('long routes', () => {
  it('are handled past the initial route width, while other flows are active', () => {
    // 40 links of capacity 1..40; a 40-link flow and two short ones, one started after the long one.
    const caps = Array.from({ length: 40 }, (_, l) => 1 + l);
    const flows: Flow[] = [
      { links: [3, 5], bytes: 1e6, cap: Infinity, startNs: 0 },
      { links: caps.map((_, l) => 39 - l), bytes: 1e6, cap: Infinity, startNs: 10 },
      { links: [0, 39], bytes: 1e6, cap: Infinity, startNs: 20 },
    ];
    const r = checkAgainstReference(caps, flows);
    expect(r.checks).toBeGreaterThan(0);
  });
});

describe('flows of multiplicity m', () => {
  /** Flows as groups: group g is `m[g]` identical copies of `flows[g]`. */
  function run(caps: number[], flows: Flow[], m: number[], merged: boolean, stops: number[]) {
    const sim = new Simulator();
    const net = new FlowNetwork(sim, caps);
    const ids: number[][] = flows.map(() => []);
    const doneNs: number[][] = flows.map(() => []);
    const listener = { onFlowDone: (g: number) => doneNs[g].push(sim.now) };
    flows.forEach((f, g) =>
      sim.schedule(f.startNs, {
        onEvent: () => {
          const links = Int32Array.from(f.links);
          if (merged) ids[g].push(net.startFlow(links, f.bytes, listener, g, f.cap, m[g]));
          else for (let k = 0; k < m[g]; k++) ids[g].push(net.startFlow(links, f.bytes, listener, g, f.cap));
        },
      }),
    );
    const rates: number[][] = [];
    const delivered: number[][] = [];
    for (const t of stops) {
      sim.run(t);
      rates.push(flows.map((_, g) => net.rateOf(ids[g][0] ?? -1)));
      delivered.push(caps.map((_, l) => net.bytesDelivered(l)));
      // Every copy of a group runs at the one rate.
      if (!merged) ids.forEach((list) => list.forEach((id) => expect(net.rateOf(id)).toBe(net.rateOf(list[0]))));
    }
    sim.run();
    rates.push([]);
    delivered.push(caps.map((_, l) => net.bytesDelivered(l)));
    return { rates, delivered, doneNs, flowsStarted: net.flowsStarted };
  }

  it('get the rates, finish times and per-link bytes of m separate identical flows, on random workloads', () => {
    const rng = randomStream(7, 'multiplicity');
    let merges = 0;
    for (let trial = 0; trial < 25; trial++) {
      const { caps, flows } = randomWorkload(rng, 10, 24);
      const m = flows.map(() => (rng.next() < 0.5 ? 1 : 2 + Math.floor(rng.next() * 7)));
      merges += m.filter((x) => x > 1).length;
      const stops = [...new Set(flows.flatMap((f) => [f.startNs, f.startNs + 500, f.startNs + 2500]))].sort(
        (a, b) => a - b,
      );
      const sep = run(caps, flows, m, false, stops);
      const one = run(caps, flows, m, true, stops);
      expect(one.flowsStarted).toBe(flows.length);
      // Rates: each group's one flow against its copies, and against textbook max-min over all copies.
      stops.forEach((t, s) => {
        const live = flows.map((_, g) => g).filter((g) => sep.rates[s][g] > 0);
        const expanded = live.flatMap((g) => Array.from({ length: m[g] }, () => flows[g]));
        const want = referenceRates(caps, expanded);
        let at = 0;
        for (const g of live) {
          expect(one.rates[s][g]).toBeCloseTo(sep.rates[s][g], 9);
          expect(one.rates[s][g]).toBeCloseTo(want[at], 9);
          at += m[g];
        }
        expect(one.rates[s].filter((r) => r > 0).length).toBe(live.length);
      });
      one.delivered.forEach((row, s) => row.forEach((bytes, l) => expect(bytes).toBeCloseTo(sep.delivered[s][l], 3)));
      // At the end every link carried m × bytes of each group crossing it.
      caps.forEach((_, l) => {
        const want = flows.reduce((sum, f, g) => sum + (f.links.includes(l) ? m[g] * f.bytes : 0), 0);
        expect(one.delivered[stops.length][l]).toBeCloseTo(want, 3);
      });
      flows.forEach((_, g) => {
        expect(one.doneNs[g].length).toBe(1);
        expect(sep.doneNs[g].length).toBe(m[g]);
        for (const t of sep.doneNs[g]) expect(Math.abs(t - one.doneNs[g][0])).toBeLessThanOrEqual(1);
      });
    }
    expect(merges).toBeGreaterThan(100);
  });

  it('share a link as m flows: 3 copies and 1 other flow on a 4 B/ns link get 1 B/ns each', () => {
    const sim = new Simulator();
    const net = new FlowNetwork(sim, [4, 100]);
    const at = new Map<number, number>();
    const listener = { onFlowDone: (tag: number) => at.set(tag, sim.now) };
    const a = net.startFlow(Int32Array.of(0, 1), 1000, listener, 0, Infinity, 3);
    const b = net.startFlow(Int32Array.of(0), 3000, listener, 1);
    sim.run(0);
    expect([net.rateOf(a), net.rateOf(b)]).toEqual([1, 1]);
    sim.run();
    // A ends at 1000 ns (3000 B over l0 and l1); B then has l0 alone: 2000 B at 4 B/ns, 500 ns more.
    expect([at.get(0), at.get(1)]).toEqual([1000, 1500]);
    expect([net.bytesDelivered(0), net.bytesDelivered(1)]).toEqual([6000, 3000]);
  });

  it('must be a whole number of at least 1', () => {
    const net = new FlowNetwork(new Simulator(), [1]);
    const noop = { onFlowDone: () => {} };
    for (const m of [0, -1, 1.5, NaN])
      expect(() => net.startFlow(Int32Array.of(0), 1, noop, 0, Infinity, m)).toThrow(RangeError);
  });
});
