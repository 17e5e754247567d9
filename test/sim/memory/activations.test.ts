import { describe, expect, it } from 'vitest';
import {
  activationBytesPerLayer,
  activationBytesPerRank,
  embeddingActivationBytes,
  headActivationBytes,
  korthikantiBytesPerLayer,
  type ActivationShape,
} from '../../../src/sim/memory/memory.js';
import type { ModelSpec } from '../../../src/sim/workload/model.js';
import { modelPreset } from '../../../src/sim/workload/modelPresets.js';

const gpt = modelPreset('gpt3-175b');
const [s, b, h, a] = [2048, 1, 12288, 96];
const sbh = s * b * h;

function shape(over: Partial<ActivationShape> = {}): ActivationShape {
  return {
    microBatch: b,
    seqLen: s,
    tp: 1,
    sequenceParallel: false,
    recompute: 'none',
    flashAttention: false,
    ...over,
  };
}

describe('activationBytesPerLayer (Korthikanti et al. 2022)', () => {
  it('is s·b·h·(34 + 5·a·s/h) without parallelism or recompute', () => {
    expect(activationBytesPerLayer(gpt, shape())).toBeCloseTo(sbh * (34 + (5 * a * s) / h), -2);
  });

  it('is s·b·h·(10 + 24/t + 5·a·s/(h·t)) with tensor parallelism', () => {
    for (const t of [2, 4, 8]) {
      expect(activationBytesPerLayer(gpt, shape({ tp: t }))).toBeCloseTo(
        sbh * (10 + 24 / t + (5 * a * s) / (h * t)),
        -2,
      );
    }
  });

  it('is 34·s·b·h/t with sequence parallelism and selective recompute', () => {
    expect(activationBytesPerLayer(gpt, shape({ tp: 8, sequenceParallel: true, recompute: 'selective' }))).toBeCloseTo(
      (34 * sbh) / 8,
      -2,
    );
    // Selective recompute without SP: the replicated 10 stays whole.
    expect(activationBytesPerLayer(gpt, shape({ tp: 8, recompute: 'selective' }))).toBeCloseTo(sbh * (10 + 24 / 8), -2);
  });

  it(
    'keeps the query, key, value and context at heads × ' + 'headDim wide where the heads have a width of their own',
    () => {
      // GPT-3's layer with 96 heads of 160 (a·d = 15360 beside h = 12288): Korthikanti's QKV (6·sbh) and context
      // (2·sbh) bytes grow by a·d/h; the rest of the layer does not.
      const wide: ModelSpec = { ...gpt, headDim: 160 };
      const ratio = (a * 160) / h;
      for (const t of [1, 8]) {
        const grown =
          activationBytesPerLayer(wide, shape({ tp: t, flashAttention: true })) -
          activationBytesPerLayer(gpt, shape({ tp: t, flashAttention: true }));
        expect(grown).toBeCloseTo((sbh * (6 + 2) * (ratio - 1)) / t, -2);
      }
    },
  );

  it('is 2·s·b·h with full recompute, divided by t with sequence parallelism', () => {
    expect(activationBytesPerLayer(gpt, shape({ tp: 8, recompute: 'full' }))).toBe(2 * sbh);
    expect(activationBytesPerLayer(gpt, shape({ tp: 8, sequenceParallel: true, recompute: 'full' }))).toBe(
      (2 * sbh) / 8,
    );
  });

  it('drops the 5·a·s/h term with flash attention', () => {
    expect(activationBytesPerLayer(gpt, shape({ flashAttention: true }))).toBeCloseTo(34 * sbh, -2);
    expect(activationBytesPerLayer(gpt, shape({ tp: 4, flashAttention: true }))).toBeCloseTo(sbh * (10 + 24 / 4), -2);
  });

  it('agrees with the printed closed forms for every case', () => {
    for (const tp of [1, 2, 8]) {
      for (const sequenceParallel of tp > 1 ? [false, true] : [false]) {
        for (const recompute of ['none', 'selective', 'full'] as const) {
          for (const flashAttention of [false, true]) {
            const opts = { tp, sequenceParallel, recompute, flashAttention };
            expect(activationBytesPerLayer(gpt, shape(opts))).toBeCloseTo(
              korthikantiBytesPerLayer(s, b, h, a, opts),
              -2,
            );
          }
        }
      }
    }
  });

  it('derives GQA and SwiGLU layers from their own tensors rather than the 34 of GPT', () => {
    // Llama 2 70B: no dropout masks → replicated 8 (norm inputs 4, QKV and fc1 inputs 2 + 2);
    // split: Q,K,V 2·(1 + 2·8/64) = 2.5, proj input 2, SwiGLU fc1 output 2·2f/h + fc2 input 2·f/h = 6·3.5 = 21.
    const llama = modelPreset('llama2-70b');
    const sh = {
      microBatch: 1,
      seqLen: 4096,
      tp: 8,
      sequenceParallel: false,
      recompute: 'none' as const,
      flashAttention: true,
    };
    const lsbh = 4096 * 8192;
    expect(activationBytesPerLayer(llama, sh)).toBeCloseTo(lsbh * (8 + 25.5 / 8), -2);
    expect(activationBytesPerLayer(llama, { ...sh, sequenceParallel: true })).toBeCloseTo((lsbh * 33.5) / 8, -2);
  });

  it('doubles the stored tensors, not the masks, for fp32 activations', () => {
    const fp32 = activationBytesPerLayer(gpt, shape({ flashAttention: true, bytesPerElement: 4 }));
    expect(fp32).toBeCloseTo(sbh * (2 * 32 + 2), -2); // 32 of the 34 are 2-byte tensors, 2 are 1-byte masks
  });
});

describe('activation totals per rank', () => {
  it('counts the embedding mask and the fp32 logits 4·s·b·V/t', () => {
    const sh = shape({ tp: 8, sequenceParallel: true, flashAttention: true });
    expect(embeddingActivationBytes(gpt, sh)).toBe(sbh / 8);
    expect(headActivationBytes(gpt, sh)).toBeCloseTo((4 * sbh) / 8 + (4 * s * b * gpt.vocab) / 8, -2);
  });

  it('multiplies by the micro-batches in flight (1F1B stage 0 holds p)', () => {
    const sh = shape({ tp: 8, sequenceParallel: true, recompute: 'selective' });
    const one = activationBytesPerRank(gpt, sh, { layers: 12 });
    const four = activationBytesPerRank(gpt, sh, { layers: 12, microBatchesInFlight: 4 });
    const attentionWorkingSet = (5 * a * s * s * b) / 8; // the recomputed layer's attention matrices
    expect(four - attentionWorkingSet).toBeCloseTo(4 * (one - attentionWorkingSet), -2);
    expect(one).toBeCloseTo((12 * (34 * sbh)) / 8 + attentionWorkingSet, -2);
  });

  it('adds one layer’s full activations as the working set of full recompute', () => {
    const sh = shape({ tp: 8, sequenceParallel: true, recompute: 'full', flashAttention: true });
    const got = activationBytesPerRank(gpt, sh, { layers: 96 });
    expect(got).toBeCloseTo((96 * (2 * sbh)) / 8 + (34 * sbh) / 8 - (2 * sbh) / 8, -2);
  });

  it('holds the head’s logits or a recomputed layer’s working set on the last stage, never both', () => {
    // The head's backward frees its tensors before any layer of that micro-batch is recomputed.
    const sh = shape({ tp: 8, sequenceParallel: true, recompute: 'full', flashAttention: true });
    const working = (34 * sbh) / 8 - (2 * sbh) / 8;
    const headOf = (vocab: number) => (4 * sbh) / 8 + (4 * s * b * vocab) / 8;
    const big = { ...gpt, vocab: 16 * gpt.hidden };
    expect(headOf(big.vocab)).toBeGreaterThan(working);
    expect(activationBytesPerRank(big, sh, { layers: 96, lastStage: true })).toBeCloseTo(
      (96 * (2 * sbh)) / 8 + headOf(big.vocab),
      -2,
    );
    const small = { ...gpt, vocab: 1024 };
    expect(headOf(small.vocab)).toBeLessThan(working);
    expect(activationBytesPerRank(small, sh, { layers: 96, lastStage: true })).toBeCloseTo(
      (96 * (2 * sbh)) / 8 + working,
      -2,
    );
  });

  it('counts an MLP’s layer inputs and hidden activations', () => {
    const mlp: ModelSpec = modelPreset('mlp-small');
    const sh = {
      microBatch: 32,
      seqLen: 1,
      tp: 1,
      sequenceParallel: false,
      recompute: 'none' as const,
      flashAttention: false,
    };
    const total = activationBytesPerRank(mlp, sh, { layers: 2, lastStage: true });
    expect(total).toBe(2 * 32 * (1024 + 512) + 2 * 32 * 512 + 4 * 32 * 10);
    expect(activationBytesPerLayer(mlp, { ...sh, layerIndex: 1 })).toBe(2 * 32 * 512);
  });
});
