import { describe, expect, it } from 'vitest';
import { gpuPreset } from '../../../src/sim/hardware/presets.js';
import { opTimeNs } from '../../../src/sim/workload/kernelTime.js';
import { fp8LinearStage, fp8QuantizeBytesPerElement, fp8WeightCastBytes } from '../../../src/sim/workload/fp8.js';
import { tpSyncPoints } from '../../../src/sim/parallel/tpSync.js';
import { modelPreset } from '../../../src/sim/workload/modelPresets.js';

const h100 = gpuPreset('h100-sxm5-80gb');

describe('an FP8 linear layer as Transformer Engine runs it on Hopper', () => {
  const layer = { name: 'fc2', tokens: 8192, inF: 14336, outF: 4096, params: ['w'], input: 'tensor' as const };
  const { forward, backward } = fp8LinearStage(layer, 'delayed');

  it('casts its input and its output gradient, then runs fprop, dgrad and wgrad in FP8', () => {
    expect(forward.map((o) => o.name)).toEqual(['fc2.fp8.cast', 'fc2']);
    expect(backward.map((o) => o.name)).toEqual(['fc2.fp8.grad-cast', 'fc2.dgrad', 'fc2.wgrad']);
    for (const gemm of [forward[1], ...backward.slice(1)]) expect(gemm.dtype).toBe('fp8');
    expect(backward[2].gradParams).toEqual(['w']);
  });

  it(
    'moves 1-byte operands and a bf16 result through each GEMM, ' +
      'and 2 + 2 bytes an element through a cast-transpose',
    () => {
      const { tokens: T, inF, outF } = layer;
      expect(forward[1].flops).toBe(2 * T * inF * outF);
      expect(forward[1].bytes).toBe(T * inF + inF * outF + 2 * T * outF);
      expect(forward[0].bytes).toBe(4 * T * inF);
      expect(backward[0].bytes).toBe(4 * T * outF);
    },
  );

  it('reads a tensor once more under current scaling (its amax), and only transposes after a fused norm', () => {
    expect(fp8QuantizeBytesPerElement('tensorwise', 'tensor')).toBe(6);
    expect(fp8QuantizeBytesPerElement('tensorwise', 'gradient')).toBe(6);
    expect(fp8QuantizeBytesPerElement('delayed', 'norm')).toBe(2);
    // Current scaling's norm computes the amax and writes bf16; the cast-transpose that follows reads 2 and writes 2.
    expect(fp8QuantizeBytesPerElement('tensorwise', 'norm')).toBe(4);
  });

  it(
    'times a large FP8 GEMM at the FP8 peak × the burst ' + "ceiling × Hopper's sustained fraction (MAMF 0.709, 0.889)",
    () => {
      const big = fp8LinearStage({ ...layer, tokens: 16384, inF: 16384, outF: 16384 }, 'delayed').forward[1];
      const expectedNs = big.flops / (1978.9e3 * 0.709 * 0.889) + h100.kernelLaunchNs;
      expect(opTimeNs(big, h100, 'bf16')).toBeGreaterThan(expectedNs * 0.98);
      expect(opTimeNs(big, h100, 'bf16')).toBeLessThan(expectedNs * 1.05);
    },
  );

  it(
    'casts the weights once a step: 4 bytes an element, ' +
      'or with the FP8 parameter gather the shard and the transposes',
    () => {
      expect(fp8WeightCastBytes(1000, 125, false)).toBe(4000);
      expect(fp8WeightCastBytes(1000, 125, true)).toBe(5 * 125 + 2 * 1000);
    },
  );
});

describe("sequence parallelism's all-gathers under FP8", () => {
  it('move the FP8 copies of the linear inputs (one byte an element), the LM head input still in bf16', () => {
    const model = modelPreset('llama3-8b');
    const ctx = { model, tp: 4, sequenceParallel: true, style: 'megatron' as const, tokens: 8192, elementBytes: 2 };
    const names = ['ln1', 'qkv.fp8.cast', 'qkv', 'lm_head'];
    const gathers = (fp8Gathers: boolean) =>
      tpSyncPoints(names, { ...ctx, fp8Gathers })
        .filter((s) => s.op === 'all_gather')
        .map((s) => s.bytes);
    expect(gathers(false)).toEqual([8192 * 4096 * 2, 8192 * 4096 * 2]);
    expect(gathers(true)).toEqual([8192 * 4096, 8192 * 4096 * 2]);
  });
});

describe('MXFP8 block scaling as Transformer Engine runs it on Blackwell', () => {
  it(
    'quantizes every input into both 1-byte copies and their ' +
      'E8M0 scales (one a 32 values): read 2, write 2 + 2/32',
    () => {
      for (const input of ['norm', 'tensor', 'gradient'] as const)
        expect(fp8QuantizeBytesPerElement('mxfp8', input)).toBe(2 + 2 + 2 / 32);
      // The weights the same way, once a step, with or without a shard of the optimizer.
      expect(fp8WeightCastBytes(3200, 400, false, 'mxfp8')).toBe(3200 * (4 + 2 / 32));
    },
  );

  it(
    'runs its GEMMs at the FP8 rate: ' +
      'MXFP8 tensor cores run as fast as plain FP8 (SemiAnalysis UMMA microbenchmark)',
    () => {
      const b200 = gpuPreset('b200-sxm-180gb');
      const layer = { name: 'fc1', tokens: 8192, inF: 8192, outF: 28672, params: ['w'], input: 'norm' as const };
      const [delayed, mx] = (['delayed', 'mxfp8'] as const).map((r) => fp8LinearStage(layer, r).forward[1]);
      expect(opTimeNs(mx, b200, 'bf16')).toBe(opTimeNs(delayed, b200, 'bf16'));
    },
  );
});
