import { describe, expect, it } from 'vitest';
import {
  RUNTIME_RESERVE_BYTES,
  memoryPerGpu,
  modelStateBytes,
  type MemoryInput,
} from '../../../src/sim/memory/memory.js';
import { GiB } from '../../../src/sim/engine/units.js';
import { largestLayerParameters } from '../../../src/sim/workload/model.js';
import { modelPreset } from '../../../src/sim/workload/modelPresets.js';

const P = 7.5e9;
const N = 64;

function input(over: Partial<MemoryInput> = {}): MemoryInput {
  return {
    model: modelPreset('gpt3-6.7b'),
    paramsPerRank: P,
    dp: N,
    zero: 0,
    precision: 'mixed',
    optimizer: 'adam',
    activationBytes: 0,
    bucketBytes: 0,
    reserveBytes: 0,
    ...over,
  };
}

describe('memoryPerGpu', () => {
  it('charges 16 bytes per parameter for mixed-precision Adam: 2 weights, 2 gradients, 12 optimizer', () => {
    const m = memoryPerGpu(input({ paramsPerRank: 1e9 }));
    expect(m.weightsBytes).toBe(2e9);
    expect(m.gradientsBytes).toBe(2e9);
    expect(m.optimizerBytes).toBe(12e9);
    expect(modelStateBytes(m)).toBe(16e9);
    expect(m.totalBytes).toBe(16e9);
  });

  it('follows the ZeRO paper for stages 1, 2 and 3 (7.5B parameters, 64 ranks: 120, 31.4, 16.6, 1.9 GB)', () => {
    // Rajbhandari et al. 2020, Figure 1 and §5: 4P + 12P/N, 2P + 14P/N, 16P/N.
    const state = (zero: 0 | 1 | 2 | 3): number => modelStateBytes(memoryPerGpu(input({ zero })));
    expect(state(0)).toBeCloseTo(16 * P, -3);
    expect(state(1)).toBeCloseTo(4 * P + (12 * P) / N, -3);
    expect(state(2)).toBeCloseTo(2 * P + (14 * P) / N, -3);
    expect(state(3)).toBeCloseTo((16 * P) / N, -3);
    expect(state(1) / 1e9).toBeCloseTo(31.4, 1);
    expect(state(2) / 1e9).toBeCloseTo(16.6, 1);
    expect(state(3) / 1e9).toBeCloseTo(1.88, 2);
  });

  it('charges 4 + 4 + 8 bytes per parameter for fp32 Adam', () => {
    const m = memoryPerGpu(input({ precision: 'fp32', paramsPerRank: 10 }));
    expect([m.weightsBytes, m.gradientsBytes, m.optimizerBytes]).toEqual([40, 40, 80]);
    const sgd = memoryPerGpu(input({ optimizer: 'sgd', paramsPerRank: 10 }));
    expect([sgd.weightsBytes, sgd.gradientsBytes, sgd.optimizerBytes]).toEqual([20, 20, 80]);
  });

  it('follows DeepSpeed’s estimator when asked: 4P + 16P/N for stages 1–2, 18P/N + 4·largest layer for stage 3', () => {
    const model = modelPreset('gpt3-6.7b');
    // The estimator's layer is a module (m.parameters(recurse=False)): GPT-3 6.7B's largest is its word embedding,
    // 50,257 × 4,096, larger than an MLP Linear (4,096 × 16,384 + 16,384 biases).
    const L = 50257 * 4096;
    expect(L).toBeGreaterThan(4096 * 16384 + 16384);
    const ds = (zero: 1 | 2 | 3) => memoryPerGpu(input({ zero, accounting: 'deepspeed', model }));
    expect(modelStateBytes(ds(1))).toBeCloseTo(4 * P + (16 * P) / N, -3);
    expect(modelStateBytes(ds(2))).toBeCloseTo(4 * P + (16 * P) / N, -3);
    expect(modelStateBytes(ds(3))).toBeCloseTo((18 * P) / N, -3);
    expect(ds(3).buffersBytes).toBe(4 * L);
  });

  it('holds the gathered current and prefetched layer under ZeRO-3, and the buckets', () => {
    const model = modelPreset('llama2-7b');
    const m = memoryPerGpu(input({ zero: 3, model, bucketBytes: 25 * 2 ** 20, tp: 2 }));
    expect(m.buffersBytes).toBe(2 * 25 * 2 ** 20 + 2 * 2 * (largestLayerParameters(model) / 2));
  });

  it("holds one module's weights and gradients under DeepSpeed's ZeRO-3, where FSDP holds two blocks", () => {
    // Llama-2-7B with a small vocabulary (so that no embedding is the largest module): a block is 4·4096² attention
    // + 3·4096·11008 MLP + 2·4096 norm weights; the largest module is one MLP projection, 4096 × 11008 (no biases).
    const model = { ...modelPreset('llama2-7b'), vocab: 4096 };
    const block = 4 * 4096 ** 2 + 3 * 4096 * 11008 + 2 * 4096;
    expect(largestLayerParameters(model)).toBe(block);
    const fsdp = memoryPerGpu(input({ zero: 3, model, bucketBytes: 0, zero3: 'fsdp' }));
    const deepspeed = memoryPerGpu(input({ zero: 3, model, bucketBytes: 0, zero3: 'deepspeed' }));
    expect(fsdp.buffersBytes).toBe(2 * 2 * block);
    expect(deepspeed.buffersBytes).toBe(4 * 4096 * 11008);
    // Over tensor parallelism the module is split as its weight is (column- or row-parallel).
    expect(memoryPerGpu(input({ zero: 3, model, bucketBytes: 0, zero3: 'deepspeed', tp: 4 })).buffersBytes).toBe(
      (4 * 4096 * 11008) / 4,
    );
  });

  it('holds no more bucket memory than the gradients fill: one bucket of all of them when the cap is larger', () => {
    // 1e9 parameters: 2 GB of 16-bit gradients. A 1 TB cap is one 2 GB bucket; a 1.5 GB cap is two
    // buckets in flight (1.5 GB each); a 25 MB cap keeps two 25 MB buckets.
    expect(memoryPerGpu(input({ paramsPerRank: 1e9, bucketBytes: 1e12 })).buffersBytes).toBe(2e9);
    expect(memoryPerGpu(input({ paramsPerRank: 1e9, bucketBytes: 1.5e9 })).buffersBytes).toBe(3e9);
    expect(memoryPerGpu(input({ paramsPerRank: 1e9, bucketBytes: 25e6 })).buffersBytes).toBe(50e6);
  });

  it(
    "with CPU offload keeps on the GPU what DeepSpeed's estimators say (cpu_offload): " +
      '2P for ZeRO-2, 2P/N + 4·largest layer for ZeRO-3',
    () => {
      const model = modelPreset('gpt3-6.7b');
      const L = 50257 * 4096; // the word embedding, its largest module
      const off = (zero: 1 | 2 | 3) =>
        memoryPerGpu(input({ zero, accounting: 'deepspeed', model, offloadOptimizer: true }));
      // estimate_zero2_model_states_mem_needs(cpu_offload=True): gpu_mem = 2 · params.
      expect(modelStateBytes(off(2))).toBeCloseTo(2 * P, -3);
      // estimate_zero3_model_states_mem_needs(cpu_offload=True, cpu_offload_params=False): 4·largest + 2·params / GPUs.
      expect(modelStateBytes(off(3)) + off(3).buffersBytes).toBeCloseTo(4 * L + (2 * P) / N, -3);
      // ZeRO-1 keeps its full 16-bit gradients on the GPU until the step.
      expect(modelStateBytes(off(1))).toBeCloseTo(4 * P, -3);
      // The paper's accounting drops the same: no gradient partition stays on the GPU from ZeRO-2 on.
      expect(memoryPerGpu(input({ zero: 2, offloadOptimizer: true })).gradientsBytes).toBe(0);
      expect(memoryPerGpu(input({ zero: 1, offloadOptimizer: true })).gradientsBytes).toBe(2 * P);
    },
  );

  it('drops the optimizer state from the GPU with offload and counts the DDP bucket copy when asked', () => {
    expect(memoryPerGpu(input({ offloadOptimizer: true })).optimizerBytes).toBe(0);
    expect(memoryPerGpu(input({ ddpBucketCopy: true })).buffersBytes).toBe(2 * P);
  });

  it('adds activations and the runtime reserve to the total', () => {
    const m = memoryPerGpu({ ...input({ paramsPerRank: 1e9, activationBytes: 5e9 }), reserveBytes: undefined });
    expect(m.reserveBytes).toBe(RUNTIME_RESERVE_BYTES);
    expect(m.totalBytes).toBe(16e9 + 5e9 + RUNTIME_RESERVE_BYTES);
    expect(RUNTIME_RESERVE_BYTES).toBeGreaterThan(0.5 * GiB);
    expect(RUNTIME_RESERVE_BYTES).toBeLessThan(2 * GiB);
  });
});
