import { describe, expect, it } from 'vitest';
import { Simulator } from '../../../src/sim/engine/simulator.js';
import { FlowNetwork } from '../../../src/sim/network/flowNetwork.js';
import { buildTopology } from '../../../src/sim/network/topology.js';
import { CollectiveService } from '../../../src/sim/collectives/collectiveService.js';
import { CollectiveRun } from '../../../src/sim/collectives/collectiveRun.js';
import type { Algorithm, CollectiveMode, CollectiveOp, Phase, Protocol } from '../../../src/sim/collectives/types.js';
import type { Topology } from '../../../src/sim/network/types.js';
import { presetCluster } from '../../helpers/clusters.js';

const MiB = 2 ** 20;
const range = (n: number) => [...Array(n).keys()];

/** The same phases with every merged entry written out as its `count` separate flows. */
function unmerged(phases: Phase[]): Phase[] {
  return phases.map((p) => {
    const routes: Int32Array[] = [];
    const fractions: number[] = [];
    p.routes.forEach((r, i) => {
      for (let k = 0; k < p.count[i]; k++) {
        routes.push(r);
        fractions.push(p.byteFraction[i]);
      }
    });
    return { ...p, routes, byteFraction: Float64Array.from(fractions), count: new Int32Array(routes.length).fill(1) };
  });
}

/** Bytes each link carries over the whole collective, from the phases alone. */
function plannedBytes(topology: Topology, phases: Phase[], bytes: number): number[] {
  const out = topology.links.map(() => 0);
  for (const p of phases) {
    p.routes.forEach((r, i) => {
      for (const l of r) out[l] += p.repeat * p.count[i] * p.byteFraction[i] * bytes;
    });
  }
  return out;
}

function run(topology: Topology, phases: Phase[], bytes: number, skip: boolean) {
  const sim = new Simulator();
  const net = new FlowNetwork(
    sim,
    topology.links.map((l) => l.bandwidthGBps),
  );
  let doneNs = -1;
  new CollectiveRun(sim, net, phases, bytes, { onCollectiveDone: () => (doneNs = sim.now) }, 0, skip).start();
  sim.run();
  return { doneNs, delivered: topology.links.map((_, l) => net.bytesDelivered(l)), flows: net.flowsStarted };
}

interface Case {
  node: string;
  nodes: number;
  group: number[];
  op: CollectiveOp;
  algorithm: Algorithm;
  protocol: Protocol;
  mode: CollectiveMode;
}

const cases: Case[] = [
  {
    node: 'dgx-a100-80gb',
    nodes: 2,
    group: range(16),
    op: 'all_reduce',
    algorithm: 'ring',
    protocol: 'Simple',
    mode: 'step',
  },
  {
    node: 'dgx-a100-80gb',
    nodes: 2,
    group: range(16),
    op: 'all_reduce',
    algorithm: 'ring',
    protocol: 'LL',
    mode: 'aggregated',
  },
  {
    node: 'dgx-h100',
    nodes: 4,
    group: range(32),
    op: 'reduce_scatter',
    algorithm: 'ring',
    protocol: 'LL128',
    mode: 'step',
  },
  {
    node: 'dgx-h100',
    nodes: 4,
    group: range(32),
    op: 'all_reduce',
    algorithm: 'tree',
    protocol: 'Simple',
    mode: 'aggregated',
  },
  {
    node: 'dgx-a100-80gb',
    nodes: 2,
    group: range(16),
    op: 'all_reduce',
    algorithm: 'hierarchical',
    protocol: 'Simple',
    mode: 'step',
  },
  {
    node: 'dgx-a100-80gb',
    nodes: 1,
    group: range(8),
    op: 'all_gather',
    algorithm: 'ring',
    protocol: 'Simple',
    mode: 'step',
  },
  {
    node: 'dgx-1-v100',
    nodes: 2,
    group: range(16),
    op: 'all_reduce',
    algorithm: 'ring',
    protocol: 'Simple',
    mode: 'step',
  },
  {
    node: 'pcie-8gpu',
    nodes: 2,
    group: range(16),
    op: 'broadcast',
    algorithm: 'ring',
    protocol: 'Simple',
    mode: 'aggregated',
  },
];

describe('merging identical flows of a collective phase', () => {
  it('folds the channels of a ring hop inside an NVSwitch node into one flow', () => {
    const topology = buildTopology(presetCluster('dgx-a100-80gb', 2));
    const svc = new CollectiveService(topology, { mode: 'aggregated', allReduceAlgorithm: 'ring', protocol: 'Simple' });
    const [phase] = svc.phases('all_reduce', range(16), 64 * MiB, {
      algorithm: 'ring',
      protocol: 'Simple',
      predictedNs: 0,
    });
    // 8 channels × 16 hops, 14 of them per channel inside a node, where the route does not depend on the
    // channel: the channels' rings differ in where they cross nodes, but most hops are shared.
    expect(unmerged([phase])[0].routes.length).toBe(128);
    expect(phase.routes.length).toBeLessThanOrEqual(128 / 4);
    expect(Math.max(...phase.count)).toBeGreaterThan(4);
  });

  for (const c of cases) {
    it(
      `keeps each link's bytes and the time of ${c.algorithm} ${c.op} ` +
        `(${c.protocol}, ${c.mode}) on ${c.nodes}× ${c.node}`,
      () => {
        const topology = buildTopology(presetCluster(c.node, c.nodes));
        const svc = new CollectiveService(topology, {
          mode: c.mode,
          allReduceAlgorithm: c.algorithm,
          protocol: c.protocol,
        });
        const bytes = 48 * MiB + 12345;
        const merged = svc.phases(c.op, c.group, bytes, {
          algorithm: c.algorithm,
          protocol: c.protocol,
          predictedNs: 0,
        });
        const separate = unmerged(merged);
        const want = plannedBytes(topology, separate, bytes);
        for (const skip of [false, true]) {
          const a = run(topology, separate, bytes, skip);
          const b = run(topology, merged, bytes, skip);
          expect(b.doneNs).toBe(a.doneNs);
          b.delivered.forEach((d, l) => expect(d).toBeCloseTo(a.delivered[l], 2));
          a.delivered.forEach((d, l) => expect(d).toBeCloseTo(want[l], 2));
          expect(b.flows).toBeLessThanOrEqual(a.flows);
        }
      },
    );
  }
});
