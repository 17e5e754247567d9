import { describe, expect, it } from 'vitest';
import { Simulator } from '../../../src/sim/engine/simulator.js';
import { FlowNetwork } from '../../../src/sim/network/flowNetwork.js';
import { buildTopology } from '../../../src/sim/network/topology.js';
import { CollectiveService } from '../../../src/sim/collectives/collectiveService.js';
import { ProgramExecutor } from '../../../src/sim/program/executor.js';
import { Program } from '../../../src/sim/program/types.js';
import { compileStep } from '../../../src/sim/parallel/stepCompiler.js';
import { scenarioOf } from '../../helpers/scenario.js';
import { presetCluster } from '../../helpers/clusters.js';
import { StreamBounds } from '../../../src/sim/program/streamBounds.js';
import type { Topology } from '../../../src/sim/network/types.js';

/** Runs a program twice, with and without idle-time collectives, and returns both traces. */
function bothWays(program: Program, topology: Topology) {
  const run = (idleCollectives: boolean) => {
    const sim = new Simulator();
    const net = new FlowNetwork(
      sim,
      topology.links.map((l) => l.bandwidthGBps),
    );
    const executor = new ProgramExecutor(program, sim, net, new CollectiveService(topology), {
      idleWindows: idleCollectives,
    });
    const trace = executor.run();
    return { trace, events: sim.eventsFired, executor };
  };
  return { flows: run(false), idle: run(true) };
}

/** Largest difference between the task times of two traces, ns. */
function maxDiffNs(
  a: { startNs: Float64Array; endNs: Float64Array },
  b: { startNs: Float64Array; endNs: Float64Array },
): number {
  let d = 0;
  for (let i = 0; i < a.startNs.length; i++)
    d = Math.max(d, Math.abs(a.startNs[i] - b.startNs[i]), Math.abs(a.endNs[i] - b.endNs[i]));
  return d;
}

const steps: [string, Record<string, unknown>][] = [
  [
    'TP 8 × PP 2 × DP 2, interleaved, 2:1 oversubscribed',
    {
      cluster: {
        preset: 'dgx-a100-80gb',
        nodes: 4,
        network: { preset: 'roce-100', oversubscription: 2, nodesPerLeaf: 2 },
      },
      model: { preset: 'gpt3-1.3b' },
      training: { globalBatch: 16, microBatch: 2 },
      parallel: { tp: 8, pp: 2, schedule: 'interleaved', virtualStages: 2 },
    },
  ],
  // Untied: with tied embeddings the first/last-stage embedding all-reduces may overlap the last gradient
  // all-reduces, and no collective of this small step is left on idle links.
  [
    'TP 2 × PP 2 × DP 4 with sequence parallelism, full fidelity',
    {
      cluster: {
        preset: 'dgx-a100-80gb',
        nodes: 2,
        network: { preset: 'ib-hdr', oversubscription: 4, nodesPerLeaf: 1 },
      },
      model: { preset: 'gpt3-1.3b', tiedEmbeddings: false },
      training: { globalBatch: 16, microBatch: 2 },
      parallel: { tp: 2, pp: 2, sequenceParallel: true },
      simulation: { fidelity: 'full' },
    },
  ],
  // The gradient reduce-scatter's own shadow (the other TP rank's DP group) crosses its links.
  [
    'TP 2 × DP 8 with ZeRO-3, symmetric',
    {
      cluster: { preset: 'dgx-a100-80gb', nodes: 2 },
      model: { preset: 'llama2-7b', seqLen: 1024 },
      training: { globalBatch: 16, microBatch: 1 },
      parallel: { tp: 2, zero: 3 },
    },
  ],
  // The simulated rank's DP ring and the 7 shadow rings of the other TP ranks share every NIC (PXN).
  [
    'TP 8 × DP 4 with ZeRO-1, symmetric, 2:1 oversubscribed',
    {
      cluster: {
        preset: 'dgx-a100-80gb',
        nodes: 4,
        network: { preset: 'roce-100', oversubscription: 2, nodesPerLeaf: 2 },
      },
      model: { preset: 'gpt3-1.3b' },
      training: { globalBatch: 8, microBatch: 1 },
      parallel: { tp: 8, zero: 1 },
    },
  ],
  [
    'ZeRO-3 on one node',
    {
      cluster: { preset: 'dgx-a100-80gb', nodes: 1 },
      model: { preset: 'llama2-7b', seqLen: 512 },
      training: { globalBatch: 8, microBatch: 1 },
      parallel: { zero: 3 },
    },
  ],
];

describe('collectives on idle-network time', () => {
  for (const [name, raw] of steps) {
    it(`leave every task time as the flows give it: ${name}`, () => {
      const setup = scenarioOf(raw);
      const topology = buildTopology(setup.cluster);
      const { flows, idle } = bothWays(compileStep(setup).program, topology);
      // Flow completions round up to whole ns at different absolute times: a few ns at most.
      expect(maxDiffNs(flows.trace, idle.trace)).toBeLessThanOrEqual(4);
      // And the shortcut did take place: fewer events than with every collective as flows.
      expect(idle.events).toBeLessThan(flows.events);
    });
  }

  it('stay exact with tied embeddings over a pipeline (the first/last-stage embedding all-reduce)', () => {
    const setup = scenarioOf({ ...steps[1][1], model: { preset: 'gpt3-1.3b' } });
    const program = compileStep(setup).program;
    expect(program.tasks.some((t) => t.label.startsWith('all-reduce tied embedding'))).toBe(true);
    const { flows, idle } = bothWays(program, buildTopology(setup.cluster));
    expect(maxDiffNs(flows.trace, idle.trace)).toBeLessThanOrEqual(4);
  });

  it('fall back to flows while other traffic can reach the links, and stay exact', () => {
    // Two all-reduces of one NVSwitch group on two streams, overlapping, with a point-to-point send
    // over the same GPUs' links in between: only the parts nothing else can touch may skip the flows.
    const topology = buildTopology(presetCluster('dgx-a100-80gb', 1));
    const p = new Program(8);
    const group = [0, 1, 2, 3, 4, 5, 6, 7];
    const a = p.local(0, 'compute', 'forward', 'a', 1_000);
    const ar1 = p.collective('tp-collective', 'ar 1', { op: 'all_reduce', group, bytes: 64 << 20 }, [a], 0, 'compute');
    const b = p.local(0, 'compute', 'forward', 'b', 200_000, [], 0);
    const ar2 = p.collective('tp-collective', 'ar 2', { op: 'all_reduce', group, bytes: 32 << 20 }, [a], 0, 'tp');
    p.transfer('pp-send', 'send', [0, 1], 16 << 20, [b], 0);
    const ar3 = p.collective('tp-collective', 'ar 3', { op: 'all_reduce', group, bytes: 8 << 20 }, [b], 0, 'compute');
    const { flows, idle } = bothWays(p, topology);
    expect(maxDiffNs(flows.trace, idle.trace)).toBeLessThanOrEqual(4);
    // ar 1 and ar 2 overlap each other, ar 3 overlaps the send: every one of them had to stay flows.
    expect([ar1, ar2, ar3].map((id) => idle.executor.ranOnIdleTime(id))).toEqual([false, false, false]);
  });
});

describe('collectives with shadows on idle-network time', () => {
  // GPU 0 of each of 4 nodes, and as shadows GPUs 1..7 of the same nodes. Each group keeps to its own NIC (PXN goes
  // through members only); with one shared leaf per node (not rail-optimised), 2:1 to the spine, the groups meet on the
  // leaves' links to the spine.
  const topology = buildTopology(
    presetCluster('dgx-a100-80gb', 4, {}, { oversubscription: 2, nodesPerLeaf: 1, railOptimized: false }),
  );
  const dpGroup = (g: number) => [0, 1, 2, 3].map((n) => n * 8 + g);
  const main = dpGroup(0);
  const shadowGroups = [1, 2, 3, 4, 5, 6, 7].map(dpGroup);

  function program(withShadows: boolean, other: boolean): { p: Program; ar: number; late: number } {
    const p = new Program(32, main);
    const a = p.local(0, 'compute', 'backward', 'a', 50_000);
    const ar = p.collective(
      'dp-allreduce',
      'ar',
      { op: 'all_reduce', group: main, bytes: 64 << 20, shadowGroups: withShadows ? shadowGroups : undefined },
      [a],
      0,
      'comm',
      [0],
    );
    p.local(0, 'compute', 'optimizer', 'opt', 10_000, [ar]);
    let late = -1;
    if (other) {
      // Another group's all-reduce over the same NICs and spine links, starting while the first runs.
      const b = p.local(4, 'compute', 'forward', 'b', 200_000);
      late = p.collective(
        'dp-allreduce',
        'other',
        { op: 'all_reduce', group: dpGroup(4).slice(), bytes: 16 << 20 },
        [b],
        0,
        'comm',
        [4],
      );
    }
    return { p, ar, late };
  }

  it('run a call and its shadows as one event of their idle-network time, as the flows would', () => {
    const { p, ar } = program(true, false);
    const { flows, idle } = bothWays(p, topology);
    expect(idle.executor.ranOnIdleTime(ar)).toBe(true);
    expect(maxDiffNs(flows.trace, idle.trace)).toBeLessThanOrEqual(4);
    expect(idle.events).toBeLessThan(flows.events);
    // The shadows share the NICs: the call takes longer with them than alone.
    const alone = bothWays(program(false, false).p, topology);
    expect(alone.idle.executor.ranOnIdleTime(ar)).toBe(true);
    expect(idle.trace.endNs[ar] - idle.trace.startNs[ar]).toBeGreaterThan(
      alone.idle.trace.endNs[ar] - alone.idle.trace.startNs[ar],
    );
  });

  it('run a call with shadows as flows when other traffic can reach their links meanwhile', () => {
    const { p, ar, late } = program(true, true);
    const { flows, idle } = bothWays(p, topology);
    expect(idle.executor.ranOnIdleTime(ar)).toBe(false);
    expect(idle.executor.ranOnIdleTime(late)).toBe(false);
    // The other call really slows the first one down on the oversubscribed links.
    const quiet = bothWays(program(true, false).p, topology);
    expect(flows.trace.endNs[ar]).toBeGreaterThan(quiet.flows.trace.endNs[ar]);
    expect(maxDiffNs(flows.trace, idle.trace)).toBeLessThanOrEqual(4);
  });

  it("let a call whose predecessor's shadows end as it starts run on idle time", () => {
    const p = new Program(32, main);
    let prev = p.local(0, 'compute', 'backward', 'a', 1_000);
    const ids: number[] = [];
    for (let k = 0; k < 3; k++)
      ids.push(
        (prev = p.collective(
          'dp-reducescatter',
          `rs ${k}`,
          { op: 'reduce_scatter', group: main, bytes: 32 << 20, shadowGroups },
          [prev],
          0,
          'comm',
          [0],
        )),
      );
    const { flows, idle } = bothWays(p, topology);
    for (const id of ids) expect(idle.executor.ranOnIdleTime(id)).toBe(true);
    expect(maxDiffNs(flows.trace, idle.trace)).toBeLessThanOrEqual(4);
  });
});

describe('stream bounds', () => {
  it('let a queued task end no earlier than the durations queued before it, not counting the running head', () => {
    const p = new Program(1);
    const a = p.local(0, 'compute', 'forward', 'a', 100);
    const b = p.local(0, 'compute', 'forward', 'b', 30);
    const c = p.local(0, 'compute', 'forward', 'c', 7);
    const head = new Int32Array(6);
    const bounds = new StreamBounds(
      p,
      [
        Int32Array.from([a, b, c]),
        new Int32Array(0),
        new Int32Array(0),
        new Int32Array(0),
        new Int32Array(0),
        new Int32Array(0),
      ],
      head,
    );
    expect(bounds.notStartedEndNs(a, 0)).toBe(100);
    // a may be running: b and c still need their own time after now.
    expect(bounds.notStartedEndNs(c, 50)).toBe(50 + 30 + 7);
    head[0] = 1;
    expect(bounds.notStartedEndNs(b, 120)).toBe(150);
  });
});
