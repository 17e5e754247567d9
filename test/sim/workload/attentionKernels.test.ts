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

/** The forward pass alone, TFLOP/s in the benchmark's count (causal: half the square). */
function forwardTflops(gpu: GpuSpec, kernel: AttentionKernel, seqLen: number): number {
  const d = 128;
  const batchHeads = (16384 / seqLen) * 16;
  const fwdFlops = 4 * batchHeads * seqLen * seqLen * d;
  const fwd: Op = {
    name: 'attn.core',
    kind: 'attention',
    flops: fwdFlops,
    bytes: 0,
    attention: { batchHeads, seqLen, headDim: d, causal: true, kernel, backward: false },
  };
  return fwdFlops / 2 / opTimeNs(fwd, gpu, 'fp16', { launch: false }) / 1e3;
}

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
  const fwd: Op = {
    name: 'attn.core',
    kind: 'attention',
    flops: fwdFlops,
    bytes: 0,
    attention: { ...attention, backward: false },
  };
  const bwd: Op = {
    name: 'attn.core.bwd',
    kind: 'attention',
    flops: 2 * fwdFlops,
    bytes: 0,
    attention: { ...attention, backward: true },
  };
  const ns = opTimeNs(fwd, gpu, 'fp16', { launch: false }) + opTimeNs(bwd, gpu, 'fp16', { launch: false });
  const benchmarkFlops = (fwdFlops / 2) * 3.5;
  return benchmarkFlops / ns / 1e3;
}

describe('fused attention kernels against their published benchmarks (head dim 128, causal, 16k tokens)', () => {
  // Published forward + backward TFLOP/s at sequence 2k / 4k / 8k / 16k, read from the plots: A100 FlashAttention-2,
  // Dao 2023 Fig. 4: 155 / 173 / 182 / 189; H100 FlashAttention-2, flash-attention README H100 plot: 265 / 294 /
  // 308 / 328.
  const seqLens = [2048, 4096, 8192, 16384];

  it('A100, FlashAttention-2: each sequence length within 10% of its published point', () => {
    // The model holds one efficiency per pass there, where the kernel's rises with the sequence; reading the plots
    // adds a few percent.
    [155, 173, 182, 189].forEach((tflops, i) => {
      const t = benchmarkTflops(A100_SXM4_80GB, 'fa2', seqLens[i]);
      expect(Math.abs(t / tflops - 1), `at ${seqLens[i]}: ${t.toFixed(0)} TFLOP/s`).toBeLessThan(0.1);
    });
  });

  it(
    'H100, FlashAttention-2 as SDPA runs it: ' +
      "below the flash-attention package's own points, by less as sequences grow",
    () => {
      // The Hopper figures are SDPA's, measured on an H200; the package's README plot is 5–19% faster, most at 2k.
      const ratios = [265, 294, 308, 328].map(
        (tflops, i) => benchmarkTflops(H100_SXM5_80GB, 'fa2', seqLens[i]) / tflops,
      );
      for (const r of ratios) {
        expect(r).toBeGreaterThan(0.78);
        expect(r).toBeLessThan(1);
      }
      expect(ratios[3]).toBeGreaterThan(ratios[0] + 0.08);
    },
  );

  it(
    'H100 forward alone: FlashAttention-3 and cuDNN inside ' +
      'their published ranges (FlashAttention-3 paper, Fig. 5)',
    () => {
      // Causal, head dim 128, 2k–16k: FA3 521–616 TFLOP/s, cuDNN 484–539 (±5% for reading the plot).
      const ranges: [AttentionKernel, number, number][] = [
        ['fa3', 521, 616],
        ['cudnn', 484, 539],
      ];
      for (const [kernel, lo, hi] of ranges) {
        for (const s of seqLens) {
          const t = forwardTflops(H100_SXM5_80GB, kernel, s);
          expect(t, `${kernel} at ${s}`).toBeGreaterThan(lo * 0.95);
          expect(t, `${kernel} at ${s}`).toBeLessThan(hi * 1.05);
        }
      }
      // And both well ahead of FlashAttention-2 forward and backward together, FA3 ahead of cuDNN.
      const [fa2, fa3, cudnn] = (['fa2', 'fa3', 'cudnn'] as const).map((k) => benchmarkTflops(H100_SXM5_80GB, k, 8192));
      expect(fa3).toBeGreaterThan(1.5 * fa2);
      expect(cudnn).toBeGreaterThan(1.4 * fa2);
      expect(fa3).toBeGreaterThan(cudnn);
    },
  );
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
    expect(auto.attention).toMatchObject({ kernel: 'fa2', figures: 'published', forwardEfficiency: 0.34 });
    expect(fa3.attention?.kernel).toBe('fa3');
    expect(fa3.stepTimeS).toBeLessThan(auto.stepTimeS);
    expect(candidateChanges(scenarioOf(raw('dgx-h100', {})), auto)).toContainEqual({
      label: 'FlashAttention-3 (Hopper)',
      sets: ['training.attentionKernel=fa3'],
    });
    expect(
      candidateChanges(scenarioOf(raw('dgx-h100', { attentionKernel: 'fa3' })), fa3).map((c) => c.label),
    ).not.toContain('FlashAttention-3 (Hopper)');
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
      message: expect.stringMatching(
        new RegExp(
          /^fa3: no published figures for FlashAttention-3 on a100-sxm4-80gb \(FlashAttention-3 /.source +
            /needs a Hopper GPU\); kernels with figures there: auto, fa2, triton$/.source,
        ),
      ),
    });
    // FlashAttention does not run on a V100 (attention on V100: memEfficientAttention.test.ts). An Ampere-class GPU
    // without figures of its own takes FlashAttention-2's A100 figures, and nothing else.
    expect(problemsOf(raw('dgx-1-v100', { attentionKernel: 'fa3', precision: 'fp16' }))).toContainEqual({
      path: 'training.attentionKernel',
      message: expect.stringMatching(
        /^fa3: FlashAttention-3 needs compute capability 8.0 or more \(Ampere or newer\); v100-sxm2-32gb has 7.0/,
      ),
    });
    const figureless = (training: Record<string, unknown>) => ({
      ...raw('dgx-1-v100', { precision: 'fp16', ...training }),
      cluster: {
        preset: 'dgx-1-v100',
        nodes: 1,
        gpu: { preset: 'v100-sxm2-32gb', name: 'v100-as-ampere', computeCapability: 8.0 },
      },
    });
    expect(problemsOf(figureless({ attentionKernel: 'fa3' }))).toContainEqual({
      path: 'training.attentionKernel',
      message: expect.stringMatching(
        new RegExp(
          /^fa3: no published figures for FlashAttention-3 on v100-as-ampere /.source +
            /.*use auto or fa2 \(FlashAttention-2's A100 figures stand in\)$/.source,
        ),
      ),
    });
    expect(problemsOf(figureless({ attentionKernel: 'fa2' })).map((p) => p.path)).not.toContain(
      'training.attentionKernel',
    );
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
