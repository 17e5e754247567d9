import { describe, expect, it } from 'vitest';
import { buildBlocks } from '../../../src/sim/workload/transformerOps.js';
import { opTimeNs } from '../../../src/sim/workload/kernelTime.js';
import { modelPreset } from '../../../src/sim/workload/modelPresets.js';
import { A100_SXM4_80GB, V100_SXM2_32GB } from '../../../src/sim/hardware/gpus.js';
import type { MicroBatchShape, Op } from '../../../src/sim/workload/ops.js';
import { simulateStep } from '../../../src/sim/simulateStep.js';
import { InvalidScenarioError } from '../../../src/scenario/errors.js';
import { scenarioOf } from '../../helpers/scenario.js';

/**
 * On a V100 FlashAttention does not run; PyTorch's SDPA runs xFormers' memory-efficient kernel, whose published V100
 * medians (xFormers pull request #362) are 5% slower than unfused attention forward and 15% slower backward.
 */
const shape: MicroBatchShape = {
  microBatch: 2,
  seqLen: 2048,
  dtype: 'fp16',
  tp: 1,
  sequenceParallel: false,
  flashAttention: true,
  recompute: 'none',
};
const model = modelPreset('llama2-7b');
const attentionNs = (ops: Op[]) =>
  ops
    .filter((o) => o.name.startsWith('attn.'))
    .reduce((sum, o) => sum + opTimeNs(o, V100_SXM2_32GB, 'fp16', { launch: false }), 0);
const layer = (s: MicroBatchShape) => buildBlocks(model, s).find((b) => b.layer === 0)!;

const raw = (node: string, training: Record<string, unknown> = {}, parallel: Record<string, unknown> = {}) => ({
  name: 'v',
  cluster: { preset: node, nodes: 1 },
  model: { preset: 'llama2-7b' },
  training: { globalBatch: 16, microBatch: 2, precision: 'fp16', seqLen: 2048, ...training },
  parallel: { tp: 8, ...parallel },
});
const problemsOf = (r: Record<string, unknown>) => {
  try {
    scenarioOf(r);
  } catch (err) {
    if (err instanceof InvalidScenarioError) return err.problems.map((p) => `${p.path}: ${p.message}`).join('\n');
    throw err;
  }
  return '';
};

describe('attention on a V100', () => {
  it('times the memory-efficient kernel as unfused attention × 1.05 forward and × 1.15 backward', () => {
    const fused = layer({ ...shape, attentionKernel: 'mem-efficient' });
    const unfused = layer({ ...shape, flashAttention: false });
    expect(attentionNs(fused.forward) / attentionNs(unfused.forward)).toBeCloseTo(1.05, 3);
    expect(attentionNs(fused.backward) / attentionNs(unfused.backward)).toBeCloseTo(1.15, 3);
  });

  it('is what auto means there; the step keeps no s×s matrix, so it needs less memory than unfused attention', () => {
    const auto = simulateStep(scenarioOf(raw('dgx-1-v100'))).result;
    const unfused = simulateStep(scenarioOf(raw('dgx-1-v100', { flashAttention: false }))).result;
    expect(auto.attention).toMatchObject({
      kernel: 'mem-efficient',
      timeOverUnfused: { forward: 1.05, backward: 1.15 },
    });
    expect(auto.attention?.label).not.toMatch(/FlashAttention/);
    expect(auto.memory.breakdown.activationsBytes).toBeLessThan(unfused.memory.breakdown.activationsBytes);
    // Every attention pass is slower than unfused, and nothing else changes.
    expect(auto.stepTimeS).toBeGreaterThan(unfused.stepTimeS);
    // On an A100, auto stays FlashAttention-2.
    expect(simulateStep(scenarioOf(raw('dgx-a100-80gb'))).result.attention?.kernel).toBe('fa2');
  });

  it(
    'refuses FlashAttention kernels and context parallelism on a V100, ' +
      'and the memory-efficient figures on an A100',
    () => {
      expect(problemsOf(raw('dgx-1-v100', { attentionKernel: 'fa2' }))).toMatch(
        new RegExp(
          /training.attentionKernel: fa2: FlashAttention-2 needs compute capability 8.0 /.source +
            /or more \(Ampere or newer\); v100-sxm2-32gb has 7.0 .*use auto or mem-efficient/.source,
        ),
      );
      expect(problemsOf(raw('dgx-1-v100', {}, { tp: 4, cp: 2 }))).toMatch(
        new RegExp(
          /parallel.cp: context parallelism runs on Transformer Engine's fused attention, /.source +
            /which needs compute capability 8.0/.source,
        ),
      );
      expect(problemsOf(raw('dgx-a100-80gb', { attentionKernel: 'mem-efficient' }))).toMatch(
        /training.attentionKernel: mem-efficient: its figures are for GPUs without FlashAttention .*use auto or fa2/,
      );
      expect(problemsOf(raw('dgx-1-v100', { attentionKernel: 'mem-efficient' }))).toBe('');
      expect(A100_SXM4_80GB.computeCapability).toBe(8.0);
    },
  );
});
