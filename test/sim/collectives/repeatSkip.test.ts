import { describe, expect, it } from 'vitest';
import { Simulator } from '../../../src/sim/engine/simulator.js';
import { FlowNetwork } from '../../../src/sim/network/flowNetwork.js';
import { buildTopology } from '../../../src/sim/network/topology.js';
import { CollectiveService } from '../../../src/sim/collectives/collectiveService.js';
import { CollectiveRun } from '../../../src/sim/collectives/collectiveRun.js';
import type { Phase } from '../../../src/sim/collectives/types.js';
import type { Topology } from '../../../src/sim/network/types.js';
import { presetCluster } from '../../helpers/clusters.js';

const MiB = 2 ** 20;
const range = (n: number) => [...Array(n).keys()];

/** Step-mode ring all-reduce phases over every GPU of `nodes` DGX A100 nodes. */
function ringPhases(nodes: number, bytes: number): { topology: Topology; phases: Phase[] } {
  const topology = buildTopology(presetCluster('dgx-a100-80gb', nodes));
  const svc = new CollectiveService(topology, { mode: 'step', allReduceAlgorithm: 'ring', protocol: 'Simple' });
  const phases = svc.phases('all_reduce', range(nodes * 8), bytes, {
    algorithm: 'ring',
    protocol: 'Simple',
    predictedNs: 0,
  });
  return { topology, phases };
}

interface Outcome {
  doneNs: number;
  delivered: number[];
  events: number;
}

/**
 * Runs the collective from time 0 with or without skipping; `setup` may add other work to the same
 * simulator and network first. Stops at `untilNs` if given.
 */
function runRing(
  topology: Topology,
  phases: Phase[],
  bytes: number,
  skip: boolean,
  setup?: (sim: Simulator, net: FlowNetwork) => void,
  untilNs?: number,
): Outcome {
  const sim = new Simulator();
  const net = new FlowNetwork(
    sim,
    topology.links.map((l) => l.bandwidthGBps),
  );
  setup?.(sim, net);
  let doneNs = -1;
  new CollectiveRun(sim, net, phases, bytes, { onCollectiveDone: () => (doneNs = sim.now) }, 0, skip).start();
  sim.run(untilNs);
  return { doneNs, delivered: topology.links.map((_, l) => net.bytesDelivered(l)), events: sim.eventsFired };
}

function expectSameTraffic(a: Outcome, b: Outcome): void {
  a.delivered.forEach((bytes, l) => expect(b.delivered[l]).toBeCloseTo(bytes, 0));
  expect(a.delivered.some((bytes) => bytes > 0)).toBe(true);
}

describe('skipping identical repetitions of a collective phase', () => {
  const bytes = 64 * MiB;
  const { topology, phases } = ringPhases(2, bytes);

  it('runs step mode as repetitions (what the skipping is for)', () => {
    expect(phases.some((p) => p.repeat > 2)).toBe(true);
  });

  it('ends at the same ns and moves the same bytes over every link as running every step', () => {
    const full = runRing(topology, phases, bytes, false);
    const skipped = runRing(topology, phases, bytes, true);
    expect(skipped.doneNs).toBe(full.doneNs);
    expectSameTraffic(full, skipped);
    expect(skipped.events).toBeLessThan(full.events / 4);
  });

  it('does not skip while another flow shares the network', () => {
    // A long foreign flow on the first ring route keeps every repetition from starting on an empty network.
    const route = phases[0].routes[0];
    const foreign = (_: Simulator, net: FlowNetwork) => void net.startFlow(route, 1e12, { onFlowDone: () => {} }, 0);
    const full = runRing(topology, phases, bytes, false, foreign);
    const skipped = runRing(topology, phases, bytes, true, foreign);
    expect(skipped.doneNs).toBe(full.doneNs);
    expect(skipped.events).toBe(full.events);
  });

  it('does not skip past a pending event, which here starts a flow that slows the ring down', () => {
    const quiet = runRing(topology, phases, bytes, false).doneNs;
    // A route across nodes: the NICs are the ring's bottleneck.
    const route = phases[0].routes.reduce((a, b) => (b.length > a.length ? b : a));
    const later = (sim: Simulator, net: FlowNetwork) =>
      sim.schedule(Math.floor(quiet / 2), {
        onEvent: () => net.startFlow(route, 4 * MiB, { onFlowDone: () => {} }, 1),
      });
    const full = runRing(topology, phases, bytes, false, later);
    const skipped = runRing(topology, phases, bytes, true, later);
    expect(full.doneNs).toBeGreaterThan(quiet);
    expect(skipped.doneNs).toBe(full.doneNs);
    expectSameTraffic(full, skipped);
    // It still skipped before the event and after the foreign flow was done.
    expect(skipped.events).toBeLessThan(full.events);
  });

  it('does not skip when a flow started in the wait between two repetitions', () => {
    // Find when the repetitions start, then start a foreign flow 1 ns before one of them (in the latency
    // wait after the previous one, which ran alone).
    const sim = new Simulator();
    const net = new FlowNetwork(
      sim,
      topology.links.map((l) => l.bandwidthGBps),
    );
    const starts = new Set<number>();
    const recorder = {
      startFlow: (...a: Parameters<FlowNetwork['startFlow']>) => (starts.add(sim.now), net.startFlow(...a)),
    };
    new CollectiveRun(sim, recorder, phases, bytes, { onCollectiveDone: () => {} }, 0, false).start();
    sim.run();
    const repStarts = [...starts].sort((a, b) => a - b);
    expect(Math.ceil(phases[0].latencyNs)).toBeGreaterThan(1);
    const t = repStarts[Math.floor(repStarts.length / 3)] - 1;
    const route = phases[0].routes.reduce((a, b) => (b.length > a.length ? b : a));
    const gap = (s: Simulator, n: FlowNetwork) =>
      s.schedule(t, { onEvent: () => n.startFlow(route, 4 * MiB, { onFlowDone: () => {} }, 1) });
    const full = runRing(topology, phases, bytes, false, gap);
    const skipped = runRing(topology, phases, bytes, true, gap);
    expect(skipped.doneNs).toBe(full.doneNs);
    expectSameTraffic(full, skipped);
  });

  it('stops at the end of a bounded run with the bytes delivered so far', () => {
    const quiet = runRing(topology, phases, bytes, false).doneNs;
    const untilNs = Math.floor(quiet * 0.37);
    const full = runRing(topology, phases, bytes, false, undefined, untilNs);
    const skipped = runRing(topology, phases, bytes, true, undefined, untilNs);
    expect(skipped.doneNs).toBe(-1);
    expectSameTraffic(full, skipped);
  });

  it('can be turned off in the service config, with the same result', () => {
    const group = range(16);
    const choice = { algorithm: 'ring' as const, protocol: 'Simple' as const, predictedNs: 0 };
    const on = new CollectiveService(topology, { mode: 'step', allReduceAlgorithm: 'ring', protocol: 'Simple' });
    const off = new CollectiveService(topology, {
      mode: 'step',
      allReduceAlgorithm: 'ring',
      protocol: 'Simple',
      skipRepeats: false,
    });
    expect(on.simulateIdleNs('all_reduce', group, bytes, choice)).toBe(
      off.simulateIdleNs('all_reduce', group, bytes, choice),
    );
    // What every run of the service's collectives (the step executor's included) is given.
    expect(on.skipRepeats).toBe(true);
    expect(off.skipRepeats).toBe(false);
  });
});

describe('Simulator.nextEventTimeNs', () => {
  it('is the earliest live event, or the end of the run in progress if sooner', () => {
    const sim = new Simulator();
    expect(sim.nextEventTimeNs()).toBe(Infinity);
    const h = sim.schedule(50, { onEvent: () => {} });
    sim.schedule(80, { onEvent: () => {} });
    expect(sim.nextEventTimeNs()).toBe(50);
    sim.cancel(h);
    expect(sim.nextEventTimeNs()).toBe(80);
    const seen: number[] = [];
    sim.schedule(10, { onEvent: () => seen.push(sim.nextEventTimeNs()) });
    sim.run(60);
    expect(seen).toEqual([60]);
    expect(sim.nextEventTimeNs()).toBe(80);
  });
});
