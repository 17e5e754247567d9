import type { LayerContext } from './layerContext.js';
import { elementwiseOp, gemmOp, type Op, type Stage } from './ops.js';
import { UNFUSED_SCORE_PASS_FACTOR } from './kernelTime.js';
import { eagerAttentionLayout, eagerRotary } from './eagerOps.js';
import { MEM_EFFICIENT_TIME_OVER_UNFUSED } from './attentionKernels.js';

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
 * With context parallelism (cp > 1) a rank holds s/cp of the tokens, and attention runs as Transformer Engine runs it
 * for Megatron's `--cp-comm-type` (contextParallel.ts places the communication between the calls):
 * - `p2p`, ring attention (`AttnFuncWithCPAndKVP2P`): cp kernel calls, one per block of keys and values as they come
 *   round the ring (`attn.core.cp0` … `attn.core.cp{cp−1}`). Megatron's load balancing (rank i holds chunks i and
 *   2·cp − 1 − i of 2·cp) gives every rank and every step the same causal work, 1/cp of the rank's share: each call is
 *   charged 1/cp² of the whole sequence's FLOPs, over s/cp query rows. Each call streams the rank's Q and O and one
 *   block of K and V.
 * - `all_gather` (`AttnFuncWithCPAndKVAllGather`): with the whole sequence's keys and values gathered, two calls
 *   (`attn.core.cp0`, `attn.core.cp1`), one per chunk the rank holds, each over s/(2·cp) query rows against the keys
 *   before it. Their sizes differ by rank but always add up to 1/cp of the causal work, charged half to each; each
 *   streams its chunk's Q and O and, on average, half the gathered keys and values.
 * - `a2a` (`AttnFuncWithCPAndQKVOA2A`): after the all-to-all, one call over the whole sequence for 1/cp of the rank's
 *   heads: the same kernel as without context parallelism, on fewer heads.
 */
function flashAttention(c: LayerContext): AttentionStage {
  const d = c.headDim;
  const qPerToken = c.headsPerRank * d * c.e;
  const kvPerToken = 2 * c.kvHeadsPerRank * d * c.e;
  const lsePerToken = c.headsPerRank * 4;
  const plain = c.cp === 1 || c.cpCommType === 'a2a';
  // a2a: all of the sequence, 1/cp of the heads (the token count per rank is the same either way).
  const bh = (c.b * c.headsPerRank) / (c.cpCommType === 'a2a' ? c.cp : 1);
  const wholeFwdFlops = 4 * bh * c.s * c.s * d;
  const calls = plain ? 1 : c.cpCommType === 'all_gather' ? 2 : c.cp;
  const queryLen = plain ? undefined : c.cpCommType === 'all_gather' ? c.s / (2 * c.cp) : c.s / c.cp;
  // Of the whole sequence's attention, the rank does 1/cp (ring and all-gather: its query rows; a2a: its heads).
  const fwdFlops = plain ? wholeFwdFlops : wholeFwdFlops / (c.cp * calls);
  // Tokens of queries and outputs, and of keys and values, one call streams (a2a: the whole sequence on 1/cp of the
  // heads, as many bytes as the rank's own tokens on all of them).
  const gathered = !plain && c.cpCommType === 'all_gather';
  const queryTokens = gathered ? c.tokens / 2 : c.tokens;
  const kvTokens = gathered ? (c.tokens * c.cp) / 2 : c.tokens;
  const shape = {
    batchHeads: bh,
    seqLen: c.s,
    ...(queryLen !== undefined ? { queryLen } : {}),
    headDim: d,
    causal: c.causal,
    kernel: c.attentionKernel,
  };
  const name = (base: string, i: number) => (calls > 1 ? `${base}.cp${i}` : base);
  const fwd: Op[] = Array.from({ length: calls }, (_, i) => ({
    name: name('attn.core', i),
    kind: 'attention' as const,
    flops: fwdFlops,
    bytes: queryTokens * (2 * qPerToken + lsePerToken) + kvTokens * kvPerToken,
    attention: { ...shape, backward: false },
  }));
  const bwd: Op[] = Array.from({ length: calls }, (_, i) => ({
    name: name('attn.core.bwd', i),
    kind: 'attention' as const,
    flops: 2 * fwdFlops,
    bytes: queryTokens * (4 * qPerToken + lsePerToken) + 2 * kvTokens * kvPerToken,
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

/**
 * The memory-efficient kernel PyTorch's SDPA runs where FlashAttention does not (V100): one kernel in truth, modelled
 * as the unfused attention's work at the published ratio of its time to the unfused kernels'
 * (`MEM_EFFICIENT_TIME_OVER_UNFUSED`). Its memory is a fused kernel's (no s × s matrix kept; activations.ts takes it
 * as flash attention).
 */
function memoryEfficientAttention(c: LayerContext): AttentionStage {
  const unfused = unfusedAttention(c);
  const timed =
    (ratio: number) =>
    (op: Op): Op => ({ ...op, timeFactor: ratio });
  const forward = unfused.forward.map(timed(MEM_EFFICIENT_TIME_OVER_UNFUSED.forward));
  return { forward, backward: unfused.backward.map(timed(MEM_EFFICIENT_TIME_OVER_UNFUSED.backward)), core: forward };
}

/** The attention core for this model and shape (rotary embedding included for Llama). */
export function attentionStage(c: LayerContext): AttentionStage {
  const core = !c.flash
    ? unfusedAttention(c)
    : c.attentionKernel === 'mem-efficient'
      ? memoryEfficientAttention(c)
      : flashAttention(c);
  if (c.model.arch !== 'llama') return core;
  const rope = c.eager ? eagerRotary(c) : rotary(c);
  // Hugging Face's layout copies around the kernel, in eager mode only (fused frameworks keep [s, b, h] throughout).
  const layout = c.eager ? eagerAttentionLayout(c) : { forward: [], before: [], after: [] };
  return {
    forward: [...rope.forward, ...core.forward, ...layout.forward],
    backward: [...layout.before, ...core.backward, ...rope.backward, ...layout.after],
    core: core.core,
  };
}
