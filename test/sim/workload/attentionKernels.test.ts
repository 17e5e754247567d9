import { describe, expect, it } from 'vitest';
import { opTimeNs } from '../../../src/sim/workload/kernelTime.js';
import type { AttentionKernel } from '../../../src/sim/workload/attentionKernels.js';
import type { Op } from '../../../src/sim/workload/ops.js';
import { A100_SXM4_80GB, H100_SXM5_80GB } from '../../../src/sim/hardware/gpus.js';
import type { GpuSpec } from '../../../src/sim/hardware/types.js';
import { scenarioOf } from '../../helpers/scenario.js';
import { simulateStep } from '../../../src/sim/simulateStep.js';
import { candidateChanges } from '../../../src/advise/alternatives.js';
import { InvalidScenarioError } from '../../../src/scenario/errors.js';

/**
 * The kernels' own benchmark: 16k tokens per batch, hidden 2048 (16 heads of 128), causal, fp16; FLOPs counted as
 * the benchmark counts them (forward 4·s²·d per head, halved when causal; backward 2.5× forward). Returns the
 * forward + backward TFLOP/s the model gives, to compare with the published plots.
 */
function benchmarkTflops(gpu: GpuSpec, kernel: AttentionKernel, seqLen: number): number {
  const d = 128;
  const batchHeads = (16384 / seqLen) * 16;
  const fwdFlops = 4 * batchHeads * seqLen * seqLen * d; // the ops' convention: full s×s, backward 2×
  const attention = { batchHeads, seqLen, headDim: d, causal: true, kernel };
  const fwd: Op = { name: 'attn.core', kind: 'attention', flops: fwdFlops, bytes: 0, attention: { ...attention, backward: false } };
  const bwd: Op = { name: 'attn.core.bwd', kind: 'attention', flops: 2 * fwdFlops, bytes: 0, attention: { ...attention, backward: true } };
  const ns = opTimeNs(fwd, gpu, 'fp16', { launch: false }) + opTimeNs(bwd, gpu, 'fp16', { launch: false });
  const benchmarkFlops = (fwdFlops / 2) * 3.5;
  return benchmarkFlops / ns / 1e3;
}

describe('fused attention kernels against their published benchmarks (head dim 128, causal, 16k tokens)', () => {
  // Published forward + backward TFLOP/s at sequence 2k / 4k / 8k / 16k, read from the plots (±5% for reading
  // them): A100 FlashAttention-2, Dao 2023 Fig. 4: 155 / 173 / 182 / 189; H100 FlashAttention-2, flash-attention
  // README H100 plot: 265 / 294 / 308 / 328.
  const published: [string, GpuSpec, number[]][] = [
    ['A100, FlashAttention-2', A100_SXM4_80GB, [155, 173, 182, 189]],
    ['H100, FlashAttention-2', H100_SXM5_80GB, [265, 294, 308, 328]],
  ];
  for (const [name, gpu, tflops] of published) {
    it(`${name}: within the published range over sequences 2k–16k`, () => {
      const lo = Math.min(...tflops) * 0.95;
      const hi = Math.max(...tflops) * 1.05;
      for (const s of [2048, 4096, 8192, 16384]) {
        const t = benchmarkTflops(gpu, 'fa2', s);
        expect(t).toBeGreaterThan(lo);
        expect(t).toBeLessThan(hi);
      }
    });
  }

  it('H100: FlashAttention-3 and cuDNN run faster than FlashAttention-2, FA3 fastest (FlashAttention-3 paper, Figs. 5–6)', () => {
    const [fa2, fa3, cudnn] = (['fa2', 'fa3', 'cudnn'] as const).map((k) => benchmarkTflops(H100_SXM5_80GB, k, 8192));
    expect(fa3).toBeGreaterThan(1.6 * fa2);
    expect(cudnn).toBeGreaterThan(1.4 * fa2);
    expect(fa3).toBeGreaterThan(cudnn);
    // FA3's forward, causal, head dim 128: 521–616 TFLOP/s, 0.53–0.62 of 989.
    expect(H100_SXM5_80GB.attentionKernels!.fa3!.forward).toBeGreaterThanOrEqual(0.53);
    expect(H100_SXM5_80GB.attentionKernels!.fa3!.forward).toBeLessThanOrEqual(0.62);
  });
});

describe('training.attentionKernel in a scenario', () => {
  const raw = (gpuNode: string, training: Record<string, unknown>) => ({
    name: 'k',
    cluster: { preset: gpuNode, nodes: 1 },
    model: { preset: 'llama2-7b', seqLen: 4096 },
    training: { globalBatch: 8, microBatch: 1, ...training },
    parallel: { zero: 3 },
  });

  it('auto is FlashAttention-2; on H100 FA3 makes the step faster and is offered as what to try', () => {
    const auto = simulateStep(scenarioOf(raw('dgx-h100', {}))).result;
    const fa3 = simulateStep(scenarioOf(raw('dgx-h100', { attentionKernel: 'fa3' }))).result;
    expect(auto.attention).toMatchObject({ kernel: 'fa2', figures: 'published', forwardEfficiency: 0.33 });
    expect(fa3.attention?.kernel).toBe('fa3');
    expect(fa3.stepTimeS).toBeLessThan(auto.stepTimeS);
    expect(candidateChanges(scenarioOf(raw('dgx-h100', {})), auto)).toContainEqual({ label: 'FlashAttention-3 (Hopper)', sets: ['training.attentionKernel=fa3'] });
    expect(candidateChanges(scenarioOf(raw('dgx-h100', { attentionKernel: 'fa3' })), fa3).map((c) => c.label)).not.toContain('FlashAttention-3 (Hopper)');
  });

  it('refuses FlashAttention-3 on an A100, naming the kernels there, and a kernel with unfused attention', () => {
    const problemsOf = (r: unknown) => {
      try {
        scenarioOf(r as Record<string, unknown>);
      } catch (err) {
        if (err instanceof InvalidScenarioError) return err.problems;
        throw err;
      }
      return [];
    };
    expect(problemsOf(raw('dgx-a100-80gb', { attentionKernel: 'fa3' }))).toContainEqual({
      path: 'training.attentionKernel',
      message: expect.stringMatching(/^fa3: no published figures for FlashAttention-3 on a100-sxm4-80gb \(FlashAttention-3 needs a Hopper GPU\); kernels with figures there: auto, fa2$/),
    });
    expect(problemsOf(raw('dgx-h100', { attentionKernel: 'cudnn', flashAttention: false }))).toContainEqual({
      path: 'training.attentionKernel',
      message: expect.stringMatching(/cudnn is a fused attention kernel, but training.flashAttention is false/),
    });
  });

  it('reports no attention kernel when attention is unfused', () => {
    const r = simulateStep(scenarioOf(raw('dgx-a100-80gb', { flashAttention: false }))).result;
    expect(r.attention).toBeUndefined();
  });
});
