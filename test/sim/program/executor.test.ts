import { describe, expect, it } from 'vitest';
import { Simulator } from '../../../src/sim/engine/simulator.js';
import { FlowNetwork } from '../../../src/sim/network/flowNetwork.js';
import { buildTopology } from '../../../src/sim/network/topology.js';
import { CollectiveService } from '../../../src/sim/collectives/collectiveService.js';
import { DeadlockError, ProgramExecutor } from '../../../src/sim/program/executor.js';
import { Program } from '../../../src/sim/program/types.js';
import { rankBreakdowns } from '../../../src/sim/stats/breakdown.js';
import { presetCluster } from '../../helpers/clusters.js';

function run(program: Program) {
  const topology = buildTopology(presetCluster('dgx-a100-80gb', 1));
  const sim = new Simulator();
  const net = new FlowNetwork(
    sim,
    topology.links.map((l) => l.bandwidthGBps),
  );
  const svc = new CollectiveService(topology);
  return { trace: new ProgramExecutor(program, sim, net, svc).run(), svc, topology };
}

describe('program executor', () => {
  it('runs a stream in program order, back to back', () => {
    const p = new Program(1);
    const a = p.local(0, 'compute', 'forward', 'a', 100);
    const b = p.local(0, 'compute', 'forward', 'b', 50);
    const { trace } = run(p);
    expect([trace.startNs[a], trace.endNs[a], trace.startNs[b], trace.endNs[b]]).toEqual([0, 100, 100, 150]);
  });

  it('runs two streams of one rank concurrently and waits on cross-stream dependencies', () => {
    const p = new Program(1);
    const a = p.local(0, 'compute', 'forward', 'a', 100);
    const c = p.local(0, 'copy', 'h2d', 'copy', 30);
    const b = p.local(0, 'compute', 'backward', 'b', 50, [c]);
    const d = p.local(0, 'copy', 'd2h', 'after a', 10, [a]);
    const { trace } = run(p);
    expect(trace.startNs[c]).toBe(0);
    expect(trace.startNs[b]).toBe(100);
    expect(trace.startNs[d]).toBe(100);
    expect(trace.makespanNs).toBe(150);
  });

  it('starts a collective only when every rank of the group has reached it', () => {
    const p = new Program(4);
    const ends: number[] = [];
    for (let r = 0; r < 4; r++) ends.push(p.local(r, 'compute', 'backward', `bwd ${r}`, 1000 * (r + 1)));
    const group = [0, 1, 2, 3];
    const ar = p.collective('dp-allreduce', 'ar', { op: 'all_reduce', group, bytes: 1 << 20 }, ends);
    const { trace, svc } = run(p);
    expect(trace.startNs[ar]).toBe(4000);
    const expected = svc.choose('all_reduce', group, 1 << 20).predictedNs;
    expect(trace.endNs[ar] - trace.startNs[ar]).toBeCloseTo(expected, -1);
  });

  it('keeps a comm stream in order: a later collective waits for an earlier one', () => {
    const p = new Program(2);
    const g = [0, 1];
    const c1 = p.collective('dp-allreduce', 'first', { op: 'all_reduce', group: g, bytes: 64 << 20 });
    const c2 = p.collective('dp-allreduce', 'second', { op: 'all_reduce', group: g, bytes: 1024 });
    const { trace } = run(p);
    expect(trace.startNs[c2]).toBeGreaterThanOrEqual(trace.endNs[c1]);
  });

  it('reports a dependency cycle as a deadlock instead of hanging', () => {
    const p = new Program(1);
    p.local(0, 'compute', 'forward', 'x', 10, [1]);
    p.local(0, 'copy', 'h2d', 'y', 10, [0]);
    expect(() => run(p)).toThrow(DeadlockError);
  });
});

describe('rank breakdown', () => {
  it('splits the step into compute, exposed communication and idle from the trace alone', () => {
    const p = new Program(2);
    const g = [0, 1];
    const f0 = p.local(0, 'compute', 'forward', 'f0', 1_000_000);
    const f1 = p.local(1, 'compute', 'forward', 'f1', 2_000_000);
    const ar = p.collective('dp-allreduce', 'ar', { op: 'all_reduce', group: g, bytes: 256 << 20 }, [f0, f1]);
    p.local(0, 'compute', 'optimizer', 'opt0', 500_000, [ar]);
    p.local(1, 'compute', 'optimizer', 'opt1', 500_000, [ar]);
    const { trace } = run(p);
    const [r0, r1] = rankBreakdowns(trace);
    const comm = trace.endNs[ar] - trace.startNs[ar];
    expect(r0.computeNs).toBe(1_500_000);
    expect(r1.computeNs).toBe(2_500_000);
    expect(r0.exposedCommNs).toBe(comm);
    expect(r1.exposedCommNs).toBe(comm);
    // Rank 0 waits 1 ms for rank 1 before the all-reduce can start: that is idle time.
    expect(r0.idleNs).toBe(1_000_000);
    expect(r1.idleNs).toBe(0);
    for (const r of [r0, r1]) expect(r.computeNs + r.exposedCommNs + r.idleNs).toBe(trace.makespanNs);
  });
});
