import type { LayerContext } from './layerContext.js';
import { elementwiseOp, gemmOp, type Op, type Stage } from './ops.js';
import { UNFUSED_SCORE_PASS_FACTOR } from './kernelTime.js';
import { eagerRotary } from './eagerOps.js';

/** The attention core of one layer, and the ops selective recompute re-runs. */
export interface AttentionStage extends Stage {
  /** Forward ops of the core (QKᵀ, softmax, dropout, ·V); re-run by selective recompute. */
  core: Op[];
}

/**
 * Flash-style attention (Dao 2022/2023): one fused kernel, no s×s matrix in HBM. Forward reads Q, K, V
 * and writes O and the fp32 log-sum-exp; backward reads Q, K, V, O, dO and the log-sum-exp and writes
 * dQ, dK, dV. FLOPs by convention: 4·b·s²·(a/t)·d forward (QKᵀ and P·V), twice that backward (the
 * kernel really does 2.5× because it recomputes P; kernelTime's efficiency absorbs the difference).
 *
 * With context parallelism (cp > 1) a rank holds s/cp of the tokens and runs ring attention as Transformer Engine
 * does (`AttnFuncWithCPAndKVP2P`): cp kernel calls, one per block of keys and values as they come round the ring
 * (`attn.core.cp0` … `attn.core.cp{cp−1}`; contextParallel.ts places the exchanges between them). Megatron's
 * load balancing (rank i holds chunks i and 2·cp − 1 − i of 2·cp) gives every rank and every step the same causal
 * work, 1/cp of the rank's share: each call is charged 1/cp² of the whole sequence's FLOPs, over s/cp query rows.
 * Each call streams the rank's Q and O and one block of K and V.
 */
function flashAttention(c: LayerContext): AttentionStage {
  const bh = c.b * c.headsPerRank;
  const d = c.headDim;
  const qkvPerToken = (c.headsPerRank + 2 * c.kvHeadsPerRank) * d * c.e;
  const oPerToken = c.headsPerRank * d * c.e;
  const lsePerToken = c.headsPerRank * 4;
  const steps = c.cp;
  const fwdFlops = (4 * bh * c.s * c.s * d) / (steps * steps);
  const shape = { batchHeads: bh, seqLen: c.s, ...(steps > 1 ? { queryLen: c.s / steps } : {}), headDim: d, causal: c.causal, kernel: c.attentionKernel };
  const name = (base: string, i: number) => (steps > 1 ? `${base}.cp${i}` : base);
  const fwd: Op[] = Array.from({ length: steps }, (_, i) => ({
    name: name('attn.core', i),
    kind: 'attention' as const,
    flops: fwdFlops,
    bytes: c.tokens * (qkvPerToken + oPerToken + lsePerToken),
    attention: { ...shape, backward: false },
  }));
  const bwd: Op[] = Array.from({ length: steps }, (_, i) => ({
    name: name('attn.core.bwd', i),
    kind: 'attention' as const,
    flops: 2 * fwdFlops,
    bytes: c.tokens * (2 * qkvPerToken + 2 * oPerToken + lsePerToken),
    attention: { ...shape, backward: true },
  }));
  return { forward: fwd, backward: bwd, core: fwd };
}

/**
 * Unfused attention as Megatron's non-flash path runs it: batched QKᵀ writing the s×s scores, fused
 * scale-mask-softmax, dropout on the probabilities (1-byte mask), batched P·V. GQA's K/V are expanded
 * to all query heads, so the GEMM shapes are those of multi-head attention.
 */
function unfusedAttention(c: LayerContext): AttentionStage {
  const batch = c.b * c.headsPerRank;
  const s = c.s;
  const d = c.headDim;
  const n = batch * s * s;
  // The passes over the score matrix other than dropout stream less well than plain kernels (kernelTime.ts).
  const pass = (op: Op): Op => ({ ...op, bandwidthFactor: UNFUSED_SCORE_PASS_FACTOR });
  const scores = pass(gemmOp('attn.scores', s, s, d, batch, c.dtype));
  const softmax = pass(elementwiseOp('attn.softmax', n, 5, 2 * n * c.e));
  const context = pass(gemmOp('attn.context', s, d, s, batch, c.dtype));
  const core: Op[] = [scores, softmax];
  const backward: Op[] = [
    pass(gemmOp('attn.context.dgrad', s, s, d, batch, c.dtype)), // dP = dO·Vᵀ
    pass(gemmOp('attn.context.vgrad', s, d, s, batch, c.dtype)), // dV = Pᵀ·dO
  ];
  if (c.dropout) {
    core.push(elementwiseOp('attn.dropout', n, 2, 2 * n * c.e + n));
    backward.push(elementwiseOp('attn.dropout.bwd', n, 1, 2 * n * c.e + n));
  }
  core.push(context);
  backward.push(
    pass(elementwiseOp('attn.softmax.bwd', n, 4, 3 * n * c.e)),
    pass(gemmOp('attn.scores.qgrad', s, d, s, batch, c.dtype)), // dQ = dS·K
    pass(gemmOp('attn.scores.kgrad', s, d, s, batch, c.dtype)), // dK = dSᵀ·Q
  );
  return { forward: [...core], backward, core };
}

/** Rotary position embedding on Q and K (Llama): ≈ 3 FLOPs per element, read + write. */
function rotary(c: LayerContext): Stage {
  const n = c.tokens * (c.headsPerRank + c.kvHeadsPerRank) * c.headDim;
  return {
    forward: [elementwiseOp('rope', n, 3, 2 * n * c.e)],
    backward: [elementwiseOp('rope.bwd', n, 3, 2 * n * c.e)],
  };
}

/** The attention core for this model and shape (rotary embedding included for Llama). */
export function attentionStage(c: LayerContext): AttentionStage {
  const core = c.flash ? flashAttention(c) : unfusedAttention(c);
  if (c.model.arch !== 'llama') return core;
  const rope = c.eager ? eagerRotary(c) : rotary(c);
  return {
    forward: [...rope.forward, ...core.forward],
    backward: [...core.backward, ...rope.backward],
    core: core.core,
  };
}
