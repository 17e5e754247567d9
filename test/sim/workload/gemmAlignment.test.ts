import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { A100_SXM4_80GB, H200_SXM_141GB, HOPPER_MISALIGNED_GEMM_SLOWDOWN } from '../../../src/sim/hardware/gpus.js';
import type { Dtype, GpuSpec } from '../../../src/sim/hardware/types.js';
import {
  dimAlignmentBytes,
  gemmEfficiency,
  gemmMisaligned,
  misalignedGemmSlowdown,
  MISALIGNED_GEMM_SLOWDOWN,
  opTimeNs,
} from '../../../src/sim/workload/kernelTime.js';
import { gemmOp, linearStage } from '../../../src/sim/workload/ops.js';

/** The A100 preset without launch overhead, so a GEMM's time is its compute time alone. */
const gpu: GpuSpec = { ...A100_SXM4_80GB, kernelLaunchNs: 0 };

describe('tensor-core alignment of GEMM dimensions', () => {
  it('asks for 16 bytes: 8 fp16/bf16 elements, 4 tf32, 16 fp8; fp32 (CUDA cores) never misaligned', () => {
    const shape = (n: number) => ({ m: 4096, n, k: 2048, batch: 1 });
    expect(gemmMisaligned(shape(50304), 'fp16')).toBe(false);
    expect(gemmMisaligned(shape(50257), 'fp16')).toBe(true);
    expect(gemmMisaligned(shape(12564), 'bf16')).toBe(true); // a multiple of 4, not of 8
    expect(gemmMisaligned(shape(12564), 'tf32')).toBe(false);
    expect(gemmMisaligned(shape(25128), 'fp8')).toBe(true); // 8 but not 16
    expect(gemmMisaligned(shape(50257), 'fp32')).toBe(false);
    // Every dimension counts (each can be a leading dimension): k in the dgrad, m in the wgrad.
    expect(gemmMisaligned({ m: 4096, n: 2048, k: 50257 }, 'fp16')).toBe(true);
    expect(gemmMisaligned({ m: 50257, n: 2048, k: 4096 }, 'fp16')).toBe(true);
    // A per-rank width that is not a whole number is a model split a framework would pad: not flagged.
    expect(gemmMisaligned(shape(50257 / 8), 'fp16')).toBe(false);
  });

  it('charges the cited slowdown on the compute time of a misaligned GEMM, and nothing on an aligned one', () => {
    const flopsNs = (n: number) => (2 * 4096 * n * 2048) / (312e3 * gemmEfficiency(4096, n, 2048, gpu, 'fp16'));
    for (const n of [50304, 25216])
      expect(opTimeNs(gemmOp('lm_head', 4096, n, 2048, 1, 'fp16'), gpu, 'fp16')).toBe(Math.round(flopsNs(n)));
    for (const n of [50257, 25129])
      expect(opTimeNs(gemmOp('lm_head', 4096, n, 2048, 1, 'fp16'), gpu, 'fp16')).toBe(
        Math.round(MISALIGNED_GEMM_SLOWDOWN * flopsNs(n)),
      );
    // Netflix's language-model head: one vocabulary off the boundary triples the layer's time.
    const ratio =
      opTimeNs(gemmOp('lm_head', 4096, 50257, 2048, 1, 'bf16'), gpu, 'bf16') /
      opTimeNs(gemmOp('lm_head', 4096, 50304, 2048, 1, 'bf16'), gpu, 'bf16');
    expect(ratio).toBeGreaterThan(2.9);
    expect(ratio).toBeLessThan(3.1);
  });

  it(
    "checks a linear layer's features, " + "not its token count (never a leading dimension in PyTorch's cuBLAS calls)",
    () => {
      const misaligned = (tokens: number, inF: number, outF: number) => {
        const st = linearStage('fc', tokens, inF, outF, 'bf16', ['fc.weight']);
        return [...st.forward, ...st.backward].map((op) => gemmMisaligned(op.gemm!, 'bf16'));
      };
      expect(misaligned(1020 * 3, 1024, 4096)).toEqual([false, false, false]);
      expect(misaligned(4096, 1022, 4096)).toEqual([true, true, true]);
      // Unfused attention's scores are s × s: there the sequence length is a leading dimension.
      expect(gemmMisaligned(gemmOp('attn.scores', 1020, 1020, 64, 16, 'bf16').gemm!, 'bf16')).toBe(true);
      // So a model over 1020 tokens costs about 1020/1024 of one over 1024 in its linear layers, not 3×.
      const time = (tokens: number) =>
        opTimeNs(linearStage('fc', tokens, 4096, 4096, 'bf16', []).forward[0], gpu, 'bf16');
      expect(time(1020 * 8) / time(1024 * 8)).toBeGreaterThan(0.95);
      expect(time(1020 * 8) / time(1024 * 8)).toBeLessThan(1.01);
    },
  );

  it('applies to a calibrated GEMM model too (its grid measures aligned shapes)', () => {
    const calibrated: GpuSpec = {
      ...gpu,
      measuredGemm: {
        fp16: { tileM: 128, tileN: 128, units: 108, splitKMinK: 256, ceilingTflops: 250, smallKHalf: 32 },
      },
    };
    const aligned = opTimeNs(gemmOp('g', 4096, 50304, 2048, 1, 'fp16'), calibrated, 'fp16');
    const misaligned = opTimeNs(gemmOp('g', 4096, 50297, 2048, 1, 'fp16'), calibrated, 'fp16');
    // Same tile count (50297 and 50304 both need 393 tiles of 128), so only the slowdown separates them.
    expect(misaligned / aligned).toBeCloseTo(MISALIGNED_GEMM_SLOWDOWN, 6);
  });
});

describe('misaligned GEMMs on Hopper: the slowdown by alignment measured on an H200', () => {
  const hopper: GpuSpec = { ...H200_SXM_141GB, kernelLaunchNs: 0 };
  const measured = JSON.parse(readFileSync('reports/calibration/h200/gemm-alignment.json', 'utf8')) as {
    dtype: string;
    rows: { alignElems: number; slowdown: number }[];
  };
  const medianOf = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return (s[(s.length - 1) >> 1] + s[s.length >> 1]) / 2;
  };

  it('takes its figures from the measurement: the median over eight widths per alignment, within 1%', () => {
    expect(measured.dtype).toBe('float16');
    for (const [elems, bytes] of [
      [1, 2],
      [2, 4],
      [4, 8],
    ] as const) {
      const rows = measured.rows.filter((r) => r.alignElems === elems).map((r) => r.slowdown);
      expect(rows).toHaveLength(8);
      expect(HOPPER_MISALIGNED_GEMM_SLOWDOWN[bytes]! / medianOf(rows)).toBeCloseTo(1, 2);
    }
  });

  it(
    'charges by the narrowest leading dimension: ' +
      'an odd fp16 width about 5.7×, a width off by 4 or 8 bytes about 2.8×',
    () => {
      const ratio = (n: number, aligned: number, dtype: Dtype = 'fp16') => {
        // Time per FLOP, as the measurement compares widths.
        const perFlop = (w: number) =>
          opTimeNs(gemmOp('lm_head', 4096, w, 2048, 1, dtype, undefined, [2048, w]), hopper, dtype) / w;
        return perFlop(n) / perFlop(aligned);
      };
      expect(ratio(50257, 50304)).toBeCloseTo(5.66, 1);
      expect(ratio(50258, 50304)).toBeCloseTo(2.78, 1);
      expect(ratio(50260, 50304)).toBeCloseTo(2.81, 1);
      // tf32 has 4-byte elements: an odd width is 4-byte aligned. fp8 has 1-byte ones: nothing narrower than 2 bytes
      // was measured, so the 2-byte figure stands.
      expect(ratio(50257, 50304, 'tf32')).toBeCloseTo(2.78, 1);
      expect(ratio(50257, 50304, 'fp8')).toBeCloseTo(5.66, 1);
      expect(ratio(50256, 50304, 'fp8')).toBeCloseTo(1, 2); // 16-byte aligned: only tile rounding differs
    },
  );

  it('keeps the one published factor on GPUs without a measurement', () => {
    expect(misalignedGemmSlowdown({ m: 4096, n: 50257, k: 2048 }, 'fp16', gpu)).toBe(MISALIGNED_GEMM_SLOWDOWN);
    expect(misalignedGemmSlowdown({ m: 4096, n: 50260, k: 2048 }, 'fp16', gpu)).toBe(MISALIGNED_GEMM_SLOWDOWN);
    expect(misalignedGemmSlowdown({ m: 4096, n: 50304, k: 2048 }, 'fp16', gpu)).toBe(1);
    expect(dimAlignmentBytes(50257, 'bf16')).toBe(2);
    expect(dimAlignmentBytes(50260, 'bf16')).toBe(8);
    expect(dimAlignmentBytes(50304, 'bf16')).toBe(16);
    expect(dimAlignmentBytes(50257, 'fp32')).toBe(16);
  });
});
