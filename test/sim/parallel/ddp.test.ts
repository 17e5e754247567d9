import { describe, expect, it } from 'vitest';
import { simulateStep } from '../../../src/sim/simulateStep.js';
import { assignBuckets } from '../../../src/sim/parallel/buckets.js';
import { compileStep } from '../../../src/sim/parallel/stepCompiler.js';
import { parameterTensors } from '../../../src/sim/workload/model.js';
import { modelPreset } from '../../../src/sim/workload/modelPresets.js';
import { scenarioOf } from '../../helpers/scenario.js';

const MiB = 2 ** 20;

function bert(
  overrides: Record<string, unknown> = {},
  cluster: Record<string, unknown> = { preset: 'dgx-a100-80gb', nodes: 2 },
) {
  return scenarioOf({
    cluster,
    model: { preset: 'bert-large' },
    training: { globalBatch: 128, microBatch: 8 },
    parallel: { ddp: overrides },
  });
}

describe('DDP gradient buckets', () => {
  const tensors = parameterTensors(modelPreset('bert-large'));

  it('pack tensors in reverse registration order, each exactly once', () => {
    const buckets = assignBuckets(tensors, 2, 1 * MiB, 25 * MiB);
    const order = buckets.flatMap((b) => b.tensors);
    expect(order).toEqual(tensors.map((t) => t.name).reverse());
  });

  it('make the first bucket small (1 MiB cap) and close the others once they reach bucket_cap_mb', () => {
    const buckets = assignBuckets(tensors, 2, 1 * MiB, 25 * MiB);
    const sizes = new Map(tensors.map((t) => [t.name, t.elements * 2]));
    const first = buckets[0];
    // Closed by the tensor that crossed 1 MiB: without its last tensor it was below the cap.
    expect(first.bytes).toBeGreaterThanOrEqual(1 * MiB);
    expect(first.bytes - sizes.get(first.tensors[first.tensors.length - 1])!).toBeLessThan(1 * MiB);
    for (const b of buckets.slice(1, -1)) {
      expect(b.bytes).toBeGreaterThanOrEqual(25 * MiB);
      expect(b.bytes - sizes.get(b.tensors[b.tensors.length - 1])!).toBeLessThan(25 * MiB);
    }
    const total = tensors.reduce((a, t) => a + t.elements * 2, 0);
    expect(buckets.reduce((a, b) => a + b.bytes, 0)).toBe(total);
  });

  it('give a tensor larger than the cap a bucket of its own rather than splitting it', () => {
    const buckets = assignBuckets(tensors, 2, 1 * MiB, 1 * MiB);
    const embedding = tensors.find((t) => t.elements * 2 > 1 * MiB)!;
    expect(buckets.some((b) => b.tensors.length === 1 && b.tensors[0] === embedding.name)).toBe(true);
  });
});

describe('DDP training step', () => {
  it('hides most communication behind backward when buckets are ready early, and none with overlap off', () => {
    const on = simulateStep(bert({ overlap: true })).result;
    const off = simulateStep(bert({ overlap: false })).result;
    // Without overlap every all-reduce runs after backward: all of it is exposed.
    expect(off.breakdown.exposedCommS).toBeCloseTo(off.breakdown.commS, 6);
    expect(on.breakdown.exposedCommS).toBeLessThan(0.25 * on.breakdown.commS);
    expect(on.stepTimeS).toBeLessThan(off.stepTimeS);
    // The difference in step time is the communication that overlap hid.
    const hidden = on.breakdown.commS - on.breakdown.exposedCommS;
    expect(off.stepTimeS - on.stepTimeS).toBeCloseTo(hidden + (off.breakdown.commS - on.breakdown.commS), 3);
  });

  it(
    'shows the bucket-size trade-off on a bandwidth-poor cluster: ' +
      'tiny buckets and one huge bucket are both slower than 25 MB',
    () => {
      const cluster = { preset: 'pcie-8gpu', nodes: 2, network: 'roce-25' };
      const step = (bucketMB: number) => simulateStep(bert({ bucketMB }, cluster)).result.stepTimeS;
      const tiny = step(0.05);
      const standard = step(25);
      const huge = step(100_000);
      expect(tiny).toBeGreaterThan(standard * 1.02);
      expect(huge).toBeGreaterThan(standard * 1.02);
    },
  );

  it('communicates only in the last micro-batch under gradient accumulation (no_sync)', () => {
    const s = scenarioOf({
      cluster: { preset: 'dgx-a100-80gb', nodes: 1 },
      model: { preset: 'bert-large' },
      training: { globalBatch: 128, microBatch: 4 },
    });
    const { trace, plan } = simulateStep(s);
    expect(plan.microBatchesPerStep).toBe(4);
    const tasks = plan.program.tasks;
    const comm = tasks.filter((t) => t.collective);
    expect(comm.length).toBe(plan.stages[0].gradients.buckets.length);
    const lastForwardStart = Math.min(
      ...tasks.filter((t) => t.kind === 'forward' && t.microBatch === 3).map((t) => trace.startNs[t.id]),
    );
    for (const c of comm) expect(trace.startNs[c.id]).toBeGreaterThan(lastForwardStart);
  });

  it('has no communication on one GPU: the step is the sum of its kernels and the optimizer', () => {
    const s = scenarioOf({
      cluster: { preset: 'dgx-a100-80gb', nodes: 1, node: { gpusPerNode: 1, nicsPerNode: 1 } },
      model: { preset: 'mlp-small' },
      training: { globalBatch: 64, microBatch: 64 },
    });
    const { result, plan } = simulateStep(s);
    const sum = plan.program.tasks.reduce((a, t) => a + t.durationNs, 0);
    expect(plan.program.tasks.some((t) => t.collective)).toBe(false);
    expect(result.stepTimeS).toBeCloseTo(sum / 1e9, 12);
    expect(result.breakdown.exposedCommS).toBe(0);
  });

  it('adds up: compute + exposed communication + idle = step time', () => {
    const r = simulateStep(bert()).result;
    const b = r.breakdown;
    expect(b.computeS + b.exposedCommS + b.idleS).toBeCloseTo(r.stepTimeS, 9);
  });

  it('is deterministic: the same setup gives the same trace', () => {
    const a = simulateStep(bert());
    const b = simulateStep(bert());
    expect(Array.from(a.trace.endNs)).toEqual(Array.from(b.trace.endNs));
  });

  it('queues bucket all-reduces in bucket order behind the backward op that completes each bucket', () => {
    const plan = compileStep(bert());
    const comm = plan.program.tasks.filter((t) => t.collective);
    expect(comm.map((t) => t.collective!.bytes)).toEqual(plan.stages[0].gradients.buckets.map((b) => b.bytes));
    // Later buckets depend on later (or the same) backward tasks of rank 0.
    const dep0 = comm.map((t) => t.deps[0]);
    for (let i = 1; i < dep0.length; i++) expect(dep0[i]).toBeGreaterThanOrEqual(dep0[i - 1]);
  });
});

describe('DDP with compute jitter (stragglers)', () => {
  const jittered = (seed: number, computeJitter: number) =>
    scenarioOf({
      seed,
      cluster: { preset: 'dgx-a100-80gb', nodes: 2 },
      model: { preset: 'bert-large' },
      training: { globalBatch: 128, microBatch: 8 },
      noise: { computeJitter },
    });

  it('gives the same step for the same seed and a different one for another seed', () => {
    const a = simulateStep(jittered(1, 0.05)).result.stepTimeS;
    expect(simulateStep(jittered(1, 0.05)).result.stepTimeS).toBe(a);
    expect(simulateStep(jittered(2, 0.05)).result.stepTimeS).not.toBe(a);
  });

  it('makes ranks wait for the slowest one: idle time appears and the step is slower than without jitter', () => {
    const calm = simulateStep(jittered(1, 0)).result;
    const noisy = simulateStep(jittered(1, 0.1)).result;
    expect(calm.breakdown.idleS).toBeLessThan(1e-6);
    expect(noisy.breakdown.idleS).toBeGreaterThan(0);
    expect(noisy.stepTimeS).toBeGreaterThan(calm.stepTimeS);
  });
});
