import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { H200_SXM_141GB } from '../../../src/sim/hardware/gpus.js';
import { HOPPER_ATTENTION } from '../../../src/sim/workload/attentionKernels.js';
import { attentionComparisons } from '../../../src/validation/h200Kernels.js';

/** PyTorch's SDPA on one H200 (scripts/measure-attention.py): causal, head dim 128, 16 heads, 16k tokens. */
const measured = JSON.parse(readFileSync('reports/calibration/h200/attention.json', 'utf8')) as {
  cases: {
    backend: string;
    seq: number;
    batch: number;
    heads: number;
    headDim: number;
    forwardS: number;
    backwardS: number;
  }[];
};

/**
 * Least squares of seconds per executed FLOP·peak against 1/L (L = mean keys per query row of a causal pass over s:
 * (s + 128)/2), done here from the raw times: y = (1 + L½/L)/(η·w), so η = 1/(intercept·w) and L½ = slope/intercept.
 * w is the model's wave quantisation: 16 heads × 16k tokens / 128-row blocks = 2,048 blocks on 132 SMs, 16 waves of
 * which the last is 52% full: w = 2048 / (16 · 132).
 */
function fit(pass: 'forward' | 'backward'): { efficiency: number; halfKeys: number } {
  const peak = H200_SXM_141GB.peakTflops.bf16! * 1e12;
  const points = measured.cases
    .filter((c) => c.backend === 'flash')
    .map((c) => {
      const blocks = c.seq / 128;
      const executed =
        4 *
        c.batch *
        c.heads *
        c.seq *
        c.seq *
        c.headDim *
        (pass === 'backward' ? 2 : 1) *
        ((blocks + 1) / (2 * blocks));
      return { x: 2 / (c.seq + 128), y: c[`${pass}S`] / (executed / peak) };
    });
  const mx = points.reduce((a, p) => a + p.x, 0) / points.length;
  const my = points.reduce((a, p) => a + p.y, 0) / points.length;
  const slope =
    points.reduce((a, p) => a + (p.x - mx) * (p.y - my), 0) / points.reduce((a, p) => a + (p.x - mx) ** 2, 0);
  const intercept = my - slope * mx;
  const waves = 2048 / (Math.ceil(2048 / H200_SXM_141GB.smCount) * H200_SXM_141GB.smCount);
  return { efficiency: 1 / intercept / waves, halfKeys: slope / intercept };
}

describe("Hopper's FlashAttention-2 (SDPA's) from the H200 measurement", () => {
  it('takes its long-sequence efficiencies and half-efficiency key counts from the measured times, within 3%', () => {
    expect(measured.cases.filter((c) => c.backend === 'flash').map((c) => c.seq)).toEqual([2048, 4096, 8192, 16384]);
    const fa2 = HOPPER_ATTENTION.fa2!;
    const forward = fit('forward');
    const backward = fit('backward');
    expect(fa2.forward / forward.efficiency).toBeCloseTo(1, 1.5);
    expect(fa2.halfEfficiencyKeys!.forward / forward.halfKeys).toBeCloseTo(1, 1.5);
    // The ops count the backward as 2× the forward; the kernel's figures as 2.5×.
    expect((fa2.backward * 2) / 2.5 / backward.efficiency).toBeCloseTo(1, 1.5);
    expect(fa2.halfEfficiencyKeys!.backward / backward.halfKeys).toBeCloseTo(1, 1.5);
  });

  it('predicts every measured FlashAttention-2 pass within 5%, where one efficiency per pass missed 2k by 24%', () => {
    const fa2 = attentionComparisons().filter((c) => c.name.startsWith('fa2'));
    expect(fa2).toHaveLength(8);
    for (const c of fa2) expect(Math.abs(c.errorPct), c.name).toBeLessThan(5);
  });
});
