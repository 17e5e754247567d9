import { describe, expect, it } from 'vitest';
import { ScenarioError } from '../../../src/sim/errors.js';
import { parameterTensors, type ModelSpec } from '../../../src/sim/workload/model.js';
import { modelPreset } from '../../../src/sim/workload/modelPresets.js';
import { blocksFlops, type Block, type MicroBatchShape, type Op } from '../../../src/sim/workload/ops.js';
import { buildBlocks } from '../../../src/sim/workload/transformerOps.js';

const base: MicroBatchShape = {
  microBatch: 2,
  seqLen: 1024,
  dtype: 'bf16',
  tp: 1,
  sequenceParallel: false,
  flashAttention: true,
  recompute: 'none',
};

/** A 2-layer copy of a preset: same widths, fast to build. */
function small(name: string, layers = 2): ModelSpec {
  return { ...modelPreset(name), layers };
}

function sum(ops: Op[], pick: (op: Op) => boolean = () => true): number {
  return ops.filter(pick).reduce((s, op) => s + op.flops, 0);
}

function layer(blocks: Block[], i = 0): Block {
  return blocks.find((b) => b.name === `layer.${i}`)!;
}

const isGemm = (op: Op): boolean => op.kind === 'gemm';

describe('buildBlocks', () => {
  it('lists every trainable tensor exactly once in some backward op', () => {
    for (const name of ['gpt3-1.3b', 'llama2-70b', 'llama3-8b', 'bert-large', 'mlp-small']) {
      for (const tied of [true, false]) {
        const m = { ...small(name), tiedEmbeddings: tied };
        const expected = parameterTensors(m)
          .map((t) => t.name)
          .sort();
        for (const shape of [base, { ...base, tp: 2, recompute: 'full' as const, flashAttention: false }]) {
          const seen = buildBlocks(m, shape).flatMap((b) => b.backward.flatMap((op) => op.gradParams ?? []));
          expect(seen.sort(), `${name} tied=${tied}`).toEqual(expected);
          const fwd = buildBlocks(m, shape).flatMap((b) => b.forward.flatMap((op) => op.gradParams ?? []));
          expect(fwd).toEqual([]);
        }
      }
    }
  });

  it('orders blocks embedding, layers, head', () => {
    const blocks = buildBlocks(small('llama2-7b', 3), base);
    expect(blocks.map((b) => b.name)).toEqual(['embedding', 'layer.0', 'layer.1', 'layer.2', 'head']);
    expect(blocks.map((b) => b.layer)).toEqual([-1, 0, 1, 2, 3]);
  });

  it('gives GEMM backward twice the forward FLOPs, in reverse order', () => {
    for (const name of ['gpt3-1.3b', 'llama2-70b', 'bert-large']) {
      for (const b of buildBlocks(small(name), base)) {
        const fwd = sum(b.forward, isGemm);
        const bwd = sum(b.backward, isGemm);
        // The embedding has no GEMM; the first layer's dgrad is kept (the embedding needs it).
        expect(bwd).toBeCloseTo(2 * fwd, -3);
      }
    }
    const l = layer(buildBlocks(small('gpt3-1.3b'), base));
    expect(l.forward.map((o) => o.name)).toEqual([
      'ln1',
      'qkv',
      'attn.core',
      'proj',
      'residual1',
      'ln2',
      'fc1',
      'gelu',
      'fc2',
      'residual2',
    ]);
    expect(l.backward.map((o) => o.name)).toEqual([
      'residual2.bwd',
      'fc2.dgrad',
      'fc2.wgrad',
      'gelu.bwd',
      'fc1.dgrad',
      'fc1.wgrad',
      'ln2.bwd',
      'residual1.bwd',
      'proj.dgrad',
      'proj.wgrad',
      'attn.core.bwd',
      'qkv.dgrad',
      'qkv.wgrad',
      'ln1.bwd',
    ]);
  });

  it('counts a GPT layer forward as 24·b·s·h² + 4·b·s²·h FLOPs in its GEMMs and attention', () => {
    const m = small('gpt3-1.3b');
    const { microBatch: b, seqLen: s } = base;
    const h = m.hidden;
    const l = layer(buildBlocks(m, base));
    expect(sum(l.forward, (op) => op.kind !== 'elementwise')).toBe(24 * b * s * h * h + 4 * b * s * s * h);
  });

  it('shapes GQA projections and SwiGLU MLPs per Megatron tensor parallelism', () => {
    const m = small('llama2-70b'); // h 8192, 64 heads, 8 kv heads, ffn 28672
    const l = layer(buildBlocks(m, { ...base, tp: 8 }));
    const op = (n: string): Op => l.forward.find((o) => o.name === n)!;
    const T = base.microBatch * base.seqLen;
    // Shapes, and the leading dimensions (the weight's in and out features) that the alignment rule checks.
    expect(op('qkv').gemm).toEqual({
      m: T,
      n: (8 + 2 * 1) * 128,
      k: 8192,
      batch: 1,
      leadingDims: [8192, (8 + 2 * 1) * 128],
    });
    expect(op('proj').gemm).toEqual({ m: T, n: 8192, k: 1024, batch: 1, leadingDims: [1024, 8192] });
    expect(op('fc1').gemm).toEqual({
      m: T,
      n: (2 * 28672) / 8,
      k: 8192,
      batch: 1,
      leadingDims: [8192, (2 * 28672) / 8],
    });
    expect(op('fc2').gemm).toEqual({ m: T, n: 8192, k: 28672 / 8, batch: 1, leadingDims: [28672 / 8, 8192] });
    expect(l.forward.map((o) => o.name)).toContain('swiglu');
    expect(l.forward.map((o) => o.name)).toContain('rope');
    expect(op('attn.core').attention).toMatchObject({ batchHeads: 2 * 8, headDim: 128, causal: true });
  });

  it('divides per-rank layer FLOPs by the TP degree, and SP divides the norm work', () => {
    const m = small('gpt3-6.7b');
    const one = layer(buildBlocks(m, base));
    const tp4 = layer(buildBlocks(m, { ...base, tp: 4 }));
    const sp4 = layer(buildBlocks(m, { ...base, tp: 4, sequenceParallel: true }));
    const nonElem = (op: Op): boolean => op.kind !== 'elementwise';
    expect(sum(tp4.forward, nonElem) * 4).toBeCloseTo(sum(one.forward, nonElem), -3);
    const ln = (b: Block): Op => b.forward.find((o) => o.name === 'ln1')!;
    expect(ln(tp4).bytes).toBe(ln(one).bytes);
    expect(ln(sp4).bytes * 4).toBe(ln(one).bytes);
  });

  it('materialises the s×s scores without flash attention', () => {
    const m = small('gpt3-1.3b');
    const l = layer(buildBlocks(m, { ...base, flashAttention: false }));
    const names = l.forward.map((o) => o.name);
    expect(names).toEqual(expect.arrayContaining(['attn.scores', 'attn.softmax', 'attn.dropout', 'attn.context']));
    const softmax = l.forward.find((o) => o.name === 'attn.softmax')!;
    const elems = base.microBatch * m.heads * base.seqLen ** 2;
    expect(softmax.bytes).toBe(2 * 2 * elems);
    // Same GEMM + attention FLOPs either way.
    const flash = layer(buildBlocks(m, base));
    const nonElem = (op: Op): boolean => op.kind !== 'elementwise';
    expect(sum(l.forward, nonElem)).toBe(sum(flash.forward, nonElem));
    expect(sum(l.backward, nonElem)).toBe(sum(flash.backward, nonElem));
  });

  it('re-runs the whole forward with full recompute and the attention core with selective', () => {
    const m = small('gpt3-1.3b');
    const none = layer(buildBlocks(m, base));
    const full = layer(buildBlocks(m, { ...base, recompute: 'full' }));
    const sel = layer(buildBlocks(m, { ...base, recompute: 'selective', flashAttention: false }));
    const n = none.forward.length;
    expect(full.backward.slice(0, n).map((o) => o.name)).toEqual(none.forward.map((o) => `recompute.${o.name}`));
    expect(sum(full.backward)).toBeCloseTo(sum(none.backward) + sum(none.forward), -3);
    expect(sel.backward.slice(0, 4).map((o) => o.name)).toEqual([
      'recompute.attn.scores',
      'recompute.attn.softmax',
      'recompute.attn.dropout',
      'recompute.attn.context',
    ]);
    // Embedding and head are never recomputed.
    const blocks = buildBlocks(m, { ...base, recompute: 'full' });
    expect(blocks[0].backward.some((o) => o.name.startsWith('recompute.'))).toBe(false);
    expect(blocks[blocks.length - 1].backward.some((o) => o.name.startsWith('recompute.'))).toBe(false);
  });

  it('builds BERT as a bidirectional post-LN encoder with an MLM head', () => {
    const blocks = buildBlocks(small('bert-large'), base);
    const l = layer(blocks);
    expect(l.forward.map((o) => o.name)).toEqual([
      'qkv',
      'attn.core',
      'proj',
      'residual1',
      'ln1',
      'fc1',
      'gelu',
      'fc2',
      'residual2',
      'ln2',
    ]);
    expect(l.forward[1].attention?.causal).toBe(false);
    const head = blocks[blocks.length - 1];
    expect(head.forward.map((o) => o.name)).toEqual(['mlm.transform', 'gelu', 'mlm.norm', 'lm_head', 'loss']);
  });

  it("moves 36 bytes a logit in eager PyTorch's cross-entropy, 16 in the fused one", () => {
    // Eager: cast (2 + 4), log_softmax (4 + 4); backward zero-fill (4), log_softmax_backward (4 + 4 + 4), cast (4 + 2).
    const m = small('llama2-7b');
    const head = (kernels: MicroBatchShape['kernels']) => buildBlocks(m, { ...base, kernels }).at(-1)!;
    const lossBytes = (b: Block) =>
      [...b.forward, ...b.backward].filter((o) => o.name.startsWith('loss')).reduce((a, o) => a + o.bytes, 0);
    const logits = base.microBatch * base.seqLen * m.vocab;
    expect(lossBytes(head('eager'))).toBe(36 * logits);
    expect(lossBytes(head('fused'))).toBe(16 * logits);
    expect(
      head('eager')
        .forward.map((o) => o.name)
        .slice(-2),
    ).toEqual(['loss.cast', 'loss']);
  });

  it('builds an MLP as linear layers, ReLU and a loss', () => {
    const m = modelPreset('mlp-small');
    const blocks = buildBlocks(m, { ...base, microBatch: 32, seqLen: 1 });
    expect(blocks.map((b) => b.forward.map((o) => o.name))).toEqual([
      ['fc0', 'relu0'],
      ['fc1', 'loss'],
    ]);
    expect(blocks[0].backward.map((o) => o.name)).toEqual(['relu0.bwd', 'fc0.wgrad']);
    const gemmFwd = 2 * 32 * (1024 * 512 + 512 * 10);
    expect(
      sum(
        blocks.flatMap((b) => b.forward),
        isGemm,
      ),
    ).toBe(gemmFwd);
    // Backward is 2× forward except that the first layer needs no gradient for its (data) input.
    const all = blocks.flatMap((b) => [...b.forward, ...b.backward]);
    expect(sum(all, isGemm)).toBe(3 * gemmFwd - 2 * 32 * 1024 * 512);
    expect(blocksFlops(blocks)).toBeGreaterThan(sum(all, isGemm));
  });

  it('rejects a TP degree that does not divide the heads', () => {
    expect(() => buildBlocks(small('gpt3-1.3b'), { ...base, tp: 3 })).toThrow(ScenarioError);
    expect(() => buildBlocks(small('gpt3-1.3b'), { ...base, tp: 3 })).toThrow(/does not divide heads \(16\)/);
    expect(() => buildBlocks(small('gpt3-1.3b'), { ...base, microBatch: 0 })).toThrow(/microBatch/);
  });

  it('reports positive, finite FLOPs and bytes for every op', () => {
    for (const name of ['gpt3-1.3b', 'llama3-8b', 'bert-large', 'mlp-small']) {
      for (const flashAttention of [true, false]) {
        for (const op of buildBlocks(small(name), { ...base, tp: 2, sequenceParallel: true, flashAttention }).flatMap(
          (b) => [...b.forward, ...b.backward],
        )) {
          expect(Number.isFinite(op.flops) && op.flops >= 0, op.name).toBe(true);
          expect(Number.isFinite(op.bytes) && op.bytes > 0, op.name).toBe(true);
        }
      }
    }
  });
});
