import { describe, expect, it } from 'vitest';
import { ScenarioError } from '../../../src/sim/errors.js';
import type { GpuSpec } from '../../../src/sim/hardware/types.js';
import { modelFlopsPerStep } from '../../../src/sim/workload/flops.js';
import {
  causalWorkFraction,
  gemmEfficiency,
  opTimeNs,
  optimizerOp,
  waveEfficiency,
} from '../../../src/sim/workload/kernelTime.js';
import { modelPreset } from '../../../src/sim/workload/modelPresets.js';
import { elementwiseOp, gemmOp, type Op } from '../../../src/sim/workload/ops.js';
import { buildBlocks } from '../../../src/sim/workload/transformerOps.js';

/** An H100-SXM-like fixture (NVIDIA H100 datasheet dense peaks); ceilings are test values. */
const gpu: GpuSpec = {
  name: 'test-h100',
  peakTflops: { fp32: 67, tf32: 494.7, bf16: 989.4, fp16: 989.4, fp8: 1978.9 },
  gemmCeiling: { bf16: 0.75, fp16: 0.75, tf32: 0.7, fp32: 0.9 },
  memoryBytes: 80e9,
  hbmBandwidthGBps: 3350,
  hbmEfficiency: 0.9,
  smCount: 132,
  nvlinkBandwidthGBps: 450,
  pcieGen: 5,
  kernelLaunchNs: 4000,
  source: 'test fixture',
};

describe('gemmEfficiency', () => {
  it('approaches the ceiling for large, well-shaped GEMMs and never exceeds it', () => {
    expect(gemmEfficiency(8192, 8192, 8192, gpu, 'bf16')).toBeGreaterThan(0.95 * 0.75);
    for (const [m, n, k] of [
      [1, 1, 1],
      [127, 4097, 64],
      [8192, 50257, 4096],
      [3, 5, 100000],
      [4096, 128, 4096],
    ]) {
      const e = gemmEfficiency(m, n, k, gpu, 'bf16');
      expect(e).toBeGreaterThan(0);
      expect(e).toBeLessThanOrEqual(0.75);
    }
  });

  it('charges a whole extra wave for one tile more than the SMs hold', () => {
    // 12 × 11 = 132 tiles of 128×128 fill the SMs once; 133 tiles need two waves.
    const full = gemmEfficiency(12 * 128, 11 * 128, 8192, gpu, 'bf16');
    const oneMore = gemmEfficiency(133 * 128, 128, 8192, gpu, 'bf16');
    expect(oneMore / full).toBeCloseTo(133 / 264, 2);
    expect(waveEfficiency(133, 132)).toBeCloseTo(133 / 264, 6);
  });

  it('pays for padded tiles when m is not a multiple of the tile', () => {
    const even = gemmEfficiency(128 * 132, 128, 4096, gpu, 'bf16');
    const ragged = gemmEfficiency(128 * 131 + 1, 128, 4096, gpu, 'bf16');
    expect(ragged).toBeLessThan(even);
  });

  it('uses 128×64 tiles for 4-byte types', () => {
    // n = 64·132: 132 tiles of 128×64 fill one wave in fp32; in bf16 the 66 tiles of 128×128 fill
    // half the SMs (k = 256 is too short for split-k to help).
    const fp32 = gemmEfficiency(128, 64 * 132, 256, gpu, 'fp32') / 0.9;
    const bf16 = gemmEfficiency(128, 64 * 132, 256, gpu, 'bf16') / 0.75;
    expect(bf16 / fp32).toBeCloseTo(0.5, 6);
  });

  it('splits k when there are too few tiles to fill the SMs', () => {
    // 66 tiles, long k: split in two, one full wave.
    expect(gemmEfficiency(128, 64 * 132, 1 << 16, gpu, 'bf16') / 0.75).toBeGreaterThan(0.99);
  });

  it('penalises a small k', () => {
    const bigK = gemmEfficiency(4096, 4096, 4096, gpu, 'bf16');
    const smallK = gemmEfficiency(4096, 4096, 32, gpu, 'bf16');
    expect(smallK / bigK).toBeCloseTo(0.5 / (4096 / (4096 + 32)), 3);
  });
});

describe('opTimeNs', () => {
  it('times a streaming kernel by HBM bandwidth plus launch overhead', () => {
    const op = elementwiseOp('copy', 5e8, 0, 1e9);
    expect(opTimeNs(op, gpu, 'bf16')).toBe(Math.round(1e9 / (3350 * 0.9) + 4000));
  });

  it('times a large GEMM by its FLOPs at the efficiency from its shape', () => {
    const op = gemmOp('big', 8192, 8192, 8192, 1, 'bf16');
    const expected = op.flops / (989.4e3 * gemmEfficiency(8192, 8192, 8192, gpu, 'bf16')) + 4000;
    expect(opTimeNs(op, gpu, 'bf16')).toBe(Math.round(expected));
  });

  it("stretches a compute-bound GEMM by the GPU's sustained fraction and leaves memory-bound work alone", () => {
    const gemm = gemmOp('big', 8192, 8192, 8192, 1, 'bf16');
    const sustained: GpuSpec = { ...gpu, sustainedGemmFraction: 0.8 };
    expect(
      opTimeNs(gemm, sustained, 'bf16', { launch: false }) / opTimeNs(gemm, gpu, 'bf16', { launch: false }),
    ).toBeCloseTo(1 / 0.8, 6);
    expect(gemmEfficiency(8192, 8192, 8192, sustained, 'bf16')).toBeCloseTo(
      0.8 * gemmEfficiency(8192, 8192, 8192, gpu, 'bf16'),
      12,
    );
    const copy = elementwiseOp('copy', 5e8, 0, 1e9);
    expect(opTimeNs(copy, sustained, 'bf16')).toBe(opTimeNs(copy, gpu, 'bf16'));
  });

  it('uses the dtype asked for: fp32 runs at the fp32 peak, not tf32', () => {
    const op32 = gemmOp('g', 4096, 4096, 4096, 1, 'fp32');
    expect(opTimeNs(op32, gpu, 'fp32')).toBeGreaterThan(
      5 * opTimeNs(gemmOp('g', 4096, 4096, 4096, 1, 'tf32'), gpu, 'tf32'),
    );
  });

  it('is never slower with more bandwidth or a higher peak', () => {
    const ops: Op[] = [gemmOp('g', 2048, 512, 64, 1, 'bf16'), elementwiseOp('e', 1e6, 4, 4e6), optimizerOp(1e6)];
    const faster: GpuSpec = { ...gpu, hbmBandwidthGBps: 4800, peakTflops: { ...gpu.peakTflops, bf16: 1200, fp32: 80 } };
    for (const op of ops) expect(opTimeNs(op, faster, 'bf16')).toBeLessThanOrEqual(opTimeNs(op, gpu, 'bf16'));
  });

  it('runs causal flash attention in about half the time of bidirectional', () => {
    const m = { ...modelPreset('gpt3-6.7b'), layers: 1 };
    const shape = {
      microBatch: 4,
      seqLen: 4096,
      dtype: 'bf16' as const,
      tp: 1,
      sequenceParallel: false,
      flashAttention: true,
      recompute: 'none' as const,
    };
    const causal = buildBlocks(m, shape)[1].forward.find((o) => o.kind === 'attention')!;
    const bidir: Op = { ...causal, attention: { ...causal.attention!, causal: false } };
    const ratio = (opTimeNs(causal, gpu, 'bf16') - 4000) / (opTimeNs(bidir, gpu, 'bf16') - 4000);
    expect(ratio).toBeCloseTo(causalWorkFraction(4096), 2);
    expect(causalWorkFraction(4096)).toBeCloseTo(33 / 64, 9);
  });

  it('refuses a dtype the GPU has no peak for', () => {
    const v100: GpuSpec = { ...gpu, name: 'v100ish', peakTflops: { fp32: 15.7, fp16: 125 } };
    expect(() => opTimeNs(gemmOp('g', 64, 64, 64, 1, 'bf16'), v100, 'bf16')).toThrow(ScenarioError);
    expect(() => opTimeNs(gemmOp('g', 64, 64, 64, 1, 'bf16'), v100, 'bf16')).toThrow(/no dense bf16 peak/);
    // It names the scenario field to change and what the GPU does run.
    let err: ScenarioError | undefined;
    try {
      opTimeNs(gemmOp('g', 64, 64, 64, 1, 'bf16'), v100, 'bf16');
    } catch (e) {
      err = e as ScenarioError;
    }
    expect(err?.message).toMatch(
      new RegExp(
        /^training\.precision: v100ish has no dense bf16 peak \(its spec or calibration profile /.source +
          /gives fp16, fp32\); use one it runs, for example --set training\.precision=fp16$/.source,
      ),
    );
  });

  it('gives a plausible MFU for a Llama 2 7B micro-batch on an H100-like GPU', () => {
    const m = modelPreset('llama2-7b');
    const blocks = buildBlocks(m, {
      microBatch: 1,
      seqLen: 4096,
      dtype: 'bf16',
      tp: 1,
      sequenceParallel: false,
      flashAttention: true,
      recompute: 'none',
    });
    let ns = 0;
    for (const b of blocks) for (const op of [...b.forward, ...b.backward]) ns += opTimeNs(op, gpu, 'bf16');
    const mfu = modelFlopsPerStep(m, 1, 4096) / (ns * 989.4e3);
    expect(mfu).toBeGreaterThan(0.45);
    expect(mfu).toBeLessThan(0.75);
  });
});

describe('optimizerOp', () => {
  it('moves 28 bytes per parameter for mixed-precision Adam and is memory-bound', () => {
    const op = optimizerOp(1e9);
    expect(op.kind).toBe('optimizer');
    expect(op.bytes).toBe(28e9);
    expect(opTimeNs(op, gpu, 'bf16')).toBe(Math.round(28e9 / (3350 * 0.9) + 4000));
    expect(optimizerOp(10, { optimizer: 'sgd' }).bytes).toBe(200);
    expect(optimizerOp(10, { precision: 'fp32' }).bytes).toBe(280);
  });
});
