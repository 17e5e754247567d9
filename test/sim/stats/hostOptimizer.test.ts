import { describe, expect, it } from 'vitest';
import { scenarioOf } from '../../helpers/scenario.js';
import { simulateStep } from '../../../src/sim/simulateStep.js';
import { hostAdamNs } from '../../../src/sim/parallel/optimizerStep.js';

const raw = (parallel: Record<string, unknown>, hostAdamParamsPerS?: number) => ({
  name: 'offload',
  cluster: { preset: 'dgx-a100-80gb', nodes: 1, ...(hostAdamParamsPerS ? { node: { hostAdamParamsPerS } } : {}) },
  model: { preset: 'llama2-7b', seqLen: 1024 },
  training: { globalBatch: 8, microBatch: 1 },
  parallel,
});

describe('the optimizer step on the host (CPU offload) in the time breakdown', () => {
  it('is its own share of the step, not idle time, and names the bottleneck when it is the largest wait', () => {
    const s = scenarioOf(raw({ zero: 3, offload: 'cpu' }, 1e8));
    const r = simulateStep(s).result;
    const b = r.breakdown;
    expect(b.computeS + b.exposedCommS + b.bubbleS + b.hostOptimizerS + b.idleS).toBeCloseTo(r.stepTimeS, 9);
    // Each rank's CPU-Adam over its shard, at the node's rate shared by its 8 ranks, is all exposed: the GPUs wait.
    const shardParams = r.modelParams / 8;
    expect(b.hostOptimizerS).toBeCloseTo(hostAdamNs(shardParams, s) / 1e9, 3);
    expect(b.idleS).toBeLessThan(0.01 * r.stepTimeS);
    expect(r.bottleneck.bound).toBe('optimizer on the host');
  });

  it('costs the host step without data parallelism too (dp 1: no gradient reduction to wait for)', () => {
    // tp 8 × dp 1 with ZeRO-1: the gradient shard is the rank's whole 1/8 of the model.
    const s = scenarioOf(raw({ tp: 8, zero: 1, offload: 'cpu' }));
    const on = simulateStep(s).result;
    const off = simulateStep(scenarioOf(raw({ tp: 8, zero: 1 }))).result;
    expect(on.parallel.dp).toBe(1);
    // The update waits for backward, so it adds its whole host time (less the GPU step it replaces, under 1%).
    const hostS = hostAdamNs(on.modelParams / 8, s) / 1e9;
    expect(on.stepTimeS).toBeGreaterThan(off.stepTimeS + 0.99 * hostS);
    expect(on.breakdown.hostOptimizerS).toBeGreaterThan(0.99 * hostS);
  });

  it('with a pipeline, a stage that steps on the host while others still work is not also counted as bubble', () => {
    // ZeRO-1 offload with tp 4 × pp 4 over 2 nodes: stages finish at different times.
    const s = scenarioOf({
      name: 'offload-pp',
      cluster: { preset: 'dgx-a100-80gb', nodes: 2 },
      model: { preset: 'llama2-13b', seqLen: 1024 },
      training: { globalBatch: 16, microBatch: 1 },
      parallel: { tp: 4, pp: 4, zero: 1, offload: 'cpu' },
    });
    const b = simulateStep(s).result.breakdown;
    expect(b.hostOptimizerS).toBeGreaterThan(0);
    expect(b.idleS).toBeGreaterThanOrEqual(-1e-9);
  });

  it('is zero without offload', () => {
    const r = simulateStep(scenarioOf(raw({ zero: 3 }))).result;
    expect(r.breakdown.hostOptimizerS).toBe(0);
  });
});
