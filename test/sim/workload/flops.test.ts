import { describe, expect, it } from 'vitest';
import { hardwareFlopsPerStep, megatronFlopsPerStep, modelFlopsPerStep } from '../../../src/sim/workload/flops.js';
import { parameterCount } from '../../../src/sim/workload/model.js';
import { modelPreset } from '../../../src/sim/workload/modelPresets.js';

const GPT_PRESETS = [
  'gpt3-1.3b',
  'gpt3-2.7b',
  'gpt3-6.7b',
  'gpt3-13b',
  'gpt3-175b',
  'megatron-gpt-1.7b',
  'megatron-gpt-18.4b',
  'megatron-gpt-145.6b',
  'megatron-gpt-1t',
];

function rel(a: number, b: number): number {
  return Math.abs(a - b) / b;
}

describe('step FLOPs', () => {
  it('writes Megatron eq. 3 as published (GPT-3 175B, batch 1536)', () => {
    // Narayanan et al. SC21 eq. 3, evaluated by hand: B = 1536, s = 2048, l = 96, h = 12288, V = 50257.
    const [B, s, l, h, V] = [1536, 2048, 96, 12288, 50257];
    const noRecompute = 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
    const full = 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
    const m = modelPreset('gpt3-175b');
    expect(megatronFlopsPerStep(m, B, s, false)).toBeCloseTo(noRecompute, -6);
    expect(megatronFlopsPerStep(m, B, s, true)).toBeCloseTo(full, -6);
    expect(noRecompute / 1e18).toBeGreaterThan(3.2); // ≈ 3.3 EFLOP per step
    expect(noRecompute / 1e18).toBeLessThan(3.4);
  });

  it('sums the ops of every GPT preset to Megatron’s closed form within 2%, with and without full recompute', () => {
    for (const name of GPT_PRESETS) {
      const m = modelPreset(name);
      for (const s of [m.seqLen, 512]) {
        expect(rel(modelFlopsPerStep(m, 8, s), megatronFlopsPerStep(m, 8, s, false)), `${name} s=${s}`).toBeLessThan(
          0.02,
        );
        expect(
          rel(hardwareFlopsPerStep(m, 8, s, 'full'), megatronFlopsPerStep(m, 8, s, true)),
          `${name} full`,
        ).toBeLessThan(0.02);
      }
    }
  });

  it(
    'counts model FLOPs as hardware FLOPs without recompute, ' + 'and selective recompute as one more attention core',
    () => {
      const m = modelPreset('gpt3-6.7b');
      const B = 4;
      const s = m.seqLen;
      expect(hardwareFlopsPerStep(m, B, s, 'none')).toBe(modelFlopsPerStep(m, B, s));
      const extra = hardwareFlopsPerStep(m, B, s, 'selective') - modelFlopsPerStep(m, B, s);
      expect(extra).toBeCloseTo(4 * B * s * s * m.hidden * m.layers, -6);
    },
  );

  it('is close to 6·N·tokens plus the attention term for a dense decoder', () => {
    const m = modelPreset('llama2-7b');
    const B = 16;
    const s = m.seqLen;
    const tokens = B * s;
    // 6N per token over the matmul parameters (the lookup table does no FLOPs) + 12·l·s·h per token.
    const matmulParams = parameterCount(m) - m.vocab * m.hidden;
    const expected = 6 * matmulParams * tokens + 12 * m.layers * s * m.hidden * tokens;
    expect(rel(modelFlopsPerStep(m, B, s), expected)).toBeLessThan(0.01);
  });

  it(
    'counts attention over heads × headDim, not the width, ' +
      'when the heads have a width of their own (Mistral NeMo)',
    () => {
      // 32 heads of 128 on a width of 5120: the scores and the context are 4096 wide.
      const m = {
        ...modelPreset('llama2-7b'),
        name: 'nemo-like',
        layers: 4,
        hidden: 5120,
        heads: 32,
        kvHeads: 8,
        headDim: 128,
        ffnHidden: 14336,
        vocab: 131072,
        seqLen: 4096,
      };
      const B = 2;
      const s = m.seqLen;
      const tokens = B * s;
      const matmulParams = parameterCount(m) - m.vocab * m.hidden;
      const expected = 6 * matmulParams * tokens + 12 * m.layers * s * (m.heads * m.headDim) * tokens;
      expect(rel(modelFlopsPerStep(m, B, s), expected)).toBeLessThan(0.002);
      // Against the width instead the attention term would be 25% more, 1.7% of the step: the count tells them apart.
      expect(
        rel(modelFlopsPerStep(m, B, s), 6 * matmulParams * tokens + 12 * m.layers * s * m.hidden * tokens),
      ).toBeGreaterThan(0.01);
    },
  );

  it('scales linearly with the global batch', () => {
    const m = modelPreset('bert-large');
    expect(modelFlopsPerStep(m, 64)).toBeCloseTo(8 * modelFlopsPerStep(m, 8), -3);
  });
});
