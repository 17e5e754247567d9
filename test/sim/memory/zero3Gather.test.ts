import { describe, expect, it } from 'vitest';
import { resolveScenario } from '../../../src/scenario/resolve.js';
import { stageMemories } from '../../../src/sim/memory/stageMemory.js';

/** A ~530B GPT (105 layers, hidden 20,480) with ZeRO-3 over 512 A100 80 GB, micro-batch 4, full recompute. */
const gpt530b = (parallel: Record<string, unknown>, training: Record<string, unknown> = {}) =>
  resolveScenario(
    {
      cluster: { preset: 'dgx-a100-80gb', nodes: 64 },
      model: { arch: 'gpt', layers: 105, hidden: 20480, heads: 128, seqLen: 2048, vocab: 51200 },
      training: { globalBatch: 2048, microBatch: 4, precision: 'bf16', flashAttention: false, ...training },
      parallel: { zero: 3, recompute: 'full', ...parallel },
    },
    'test',
    '.',
  );

describe("ZeRO-3's gathered weights: whose ZeRO-3 it is", () => {
  it('is FSDP unless the scenario names DeepSpeed (its import, or the megatron-deepspeed framework)', () => {
    expect(gpt530b({}).parallel.zeroConfig.stage3).toBe('fsdp');
    expect(gpt530b({ zeroConfig: { stage3: 'deepspeed' } }).parallel.zeroConfig.stage3).toBe('deepspeed');
    expect(gpt530b({}, { framework: 'megatron-deepspeed' }).parallel.zeroConfig.stage3).toBe('deepspeed');
    expect(gpt530b({ zero: 2 }).parallel.zeroConfig.stage3).toBeUndefined();
  });

  it("holds FSDP's two blocks of 16-bit weights, DeepSpeed's largest module's weights and gradient", () => {
    const h = 20480;
    // A block: QKV 3h² + 3h, projection h² + h, MLP 4h² + 4h and 4h² + h, two LayerNorms 4h.
    const block = 12 * h * h + 13 * h;
    // The largest module is an MLP Linear, 4h² + 4h, larger than the 51,200 × h embedding.
    const fc1 = 4 * h * h + 4 * h;
    const [fsdp] = stageMemories(gpt530b({ zeroConfig: { reduceBucketMB: 0.001 } }));
    const [deepspeed] = stageMemories(gpt530b({ zeroConfig: { stage3: 'deepspeed', reduceBucketMB: 0.001 } }));
    // One reduce bucket at stage 3 (DeepSpeed's ipg buffer).
    const bucket = 0.001 * 2 ** 20;
    expect(fsdp.buffersBytes).toBeCloseTo(2 * 2 * block + bucket, -3);
    expect(deepspeed.buffersBytes).toBeCloseTo(4 * fc1 + bucket, -3);
    // 18.75 GiB against 6.25 GiB.
    expect((fsdp.buffersBytes - deepspeed.buffersBytes) / 2 ** 30).toBeCloseTo(12.5, 1);
    // In fp32 training the module's weights and gradient are 4 bytes each.
    const [fp32] = stageMemories(
      gpt530b({ zeroConfig: { stage3: 'deepspeed', reduceBucketMB: 0.001 } }, { precision: 'fp32' }),
    );
    expect(fp32.buffersBytes).toBeCloseTo(8 * fc1 + 0.001 * 2 ** 20, -3);
  });

  it('warns that stage3 is ignored below ZeRO-3', () => {
    expect(gpt530b({ zero: 2, zeroConfig: { stage3: 'deepspeed' } }).warnings).toContain(
      'parallel.zeroConfig.stage3 is ignored: it says whose ZeRO-3 it is, and zero is 2',
    );
    expect(gpt530b({ zeroConfig: { stage3: 'deepspeed' } }).warnings ?? []).not.toContainEqual(
      expect.stringContaining('stage3'),
    );
  });
});
