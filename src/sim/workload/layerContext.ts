import { ScenarioError } from '../errors.js';
import type { Dtype } from '../hardware/types.js';
import { hasDropout, headDim, isCausal, isGatedMlp, kvHeadsPerRank, type ModelSpec } from './model.js';
import { eagerRmsNorm, eagerSwiglu } from './eagerOps.js';
import type { FrameworkSpec } from './framework.js';
import type { Fp8Setup } from './fp8.js';
import { resolveAttentionKernel, type AttentionKernel } from './attentionKernels.js';
import { activationElementBytes, elementwiseOp, type CpCommType, type MicroBatchShape, type Stage } from './ops.js';

/** Per-rank sizes shared by the block builders. */
export interface LayerContext {
  model: ModelSpec;
  dtype: Dtype;
  /** Micro-batch size b. */
  b: number;
  /** Sequence length s. */
  s: number;
  /** Tokens per micro-batch on this rank, b·s/cp (GEMM rows). */
  tokens: number;
  /** Context-parallel ranks the sequence is split over (1: none). */
  cp: number;
  /** How they exchange what attention needs (`MicroBatchShape.cpCommType`). */
  cpCommType: CpCommType;
  /** Tokens a norm / dropout / residual works on: b·s/t with sequence parallelism, else b·s. */
  spTokens: number;
  /** Tensor-parallel degree t. */
  tp: number;
  h: number;
  /** Query heads per rank, a/t. */
  headsPerRank: number;
  /** KV heads per rank: kv/t, or 1 (replicated) when t exceeds kv. */
  kvHeadsPerRank: number;
  headDim: number;
  /** MLP inner width per rank, f/t. */
  ffnPerRank: number;
  /** Vocabulary columns per rank, V/t (vocab-parallel head and embedding). */
  vocabPerRank: number;
  /** Bytes per stored activation element. */
  e: number;
  flash: boolean;
  causal: boolean;
  dropout: boolean;
  gated: boolean;
  layerNorm: boolean;
  /** The framework whose kernel sequence and host costs the builders emit (absent: generic ops). */
  fw?: FrameworkSpec;
  /** Element-wise work as eager PyTorch issues it (`MicroBatchShape.kernels`). */
  eager: boolean;
  /** The fused attention kernel when `flash` (`MicroBatchShape.attentionKernel`). */
  attentionKernel: AttentionKernel;
  /** FP8 training: the linear layers' GEMMs in FP8 with their quantize kernels (`MicroBatchShape.fp8`). */
  fp8?: Fp8Setup;
}

/**
 * Checks the shape against the model and derives per-rank sizes.
 * @throws ScenarioError when t does not divide the heads, or a size is not a positive integer.
 */
export function layerContext(model: ModelSpec, shape: MicroBatchShape): LayerContext {
  const { microBatch: b, seqLen: s, tp } = shape;
  const cp = shape.cp ?? 1;
  for (const [path, v] of [
    ['training.microBatch', b],
    ['training.seqLen', s],
    ['parallel.tp', tp],
    ['parallel.cp', cp],
  ] as const) {
    if (!Number.isInteger(v) || v < 1) throw new ScenarioError(path, `${v} is not a positive integer`);
  }
  if (model.arch !== 'mlp' && model.heads % tp !== 0) {
    throw new ScenarioError('parallel.tp', `${tp} does not divide heads (${model.heads})`);
  }
  if (cp > 1 && s % (2 * cp) !== 0)
    throw new ScenarioError(
      'parallel.cp',
      `the sequence (${s} tokens) does not split into 2 × cp = ${2 * cp} equal chunks`,
    );
  const tokens = (b * s) / cp;
  return {
    model,
    dtype: shape.dtype,
    b,
    s,
    tokens,
    cp,
    cpCommType: shape.cpCommType ?? 'p2p',
    spTokens: shape.sequenceParallel ? tokens / tp : tokens,
    tp,
    h: model.hidden,
    headsPerRank: model.heads / tp,
    kvHeadsPerRank: kvHeadsPerRank(model, tp),
    headDim: model.arch === 'mlp' ? 0 : headDim(model),
    ffnPerRank: model.ffnHidden / tp,
    // Megatron pads the vocabulary to a multiple of 128·t; we keep V exact (≤ 0.3% of head FLOPs).
    vocabPerRank: model.vocab / tp,
    e: activationElementBytes(shape.dtype),
    flash: shape.flashAttention,
    causal: isCausal(model),
    dropout: hasDropout(model),
    gated: isGatedMlp(model),
    layerNorm: model.arch !== 'llama',
    fw: shape.framework,
    eager: shape.kernels === 'eager',
    attentionKernel: resolveAttentionKernel(shape.attentionKernel),
    ...(shape.fp8 ? { fp8: shape.fp8 } : {}),
  };
}

/**
 * LayerNorm (mean, variance, normalise, affine ≈ 8 FLOPs/element) or RMSNorm (≈ 4) over the
 * sequence-parallel token count. Backward ≈ 2× FLOPs and reads dy, x and the residual gradient it
 * joins, writing dx. Gradients of the norm's weights complete here.
 */
export function normStage(name: string, c: LayerContext, params: string[], tokens = c.spTokens): Stage {
  if (c.eager && !c.layerNorm) return eagerRmsNorm(name, c, params, tokens);
  const n = tokens * c.h;
  const fpe = c.layerNorm ? 8 : 4;
  return {
    forward: [elementwiseOp(name, n, fpe, 2 * n * c.e)],
    backward: [elementwiseOp(`${name}.bwd`, n, 2 * fpe, 4 * n * c.e, params)],
  };
}

/**
 * Bias-dropout-add (Megatron's fused kernel) or a plain residual add when the model has no dropout:
 * reads the branch output and the residual, writes the sum (+ a 1-byte mask with dropout). Without
 * dropout the backward is the identity and needs no kernel.
 */
export function residualStage(name: string, c: LayerContext): Stage {
  const n = c.spTokens * c.h;
  if (!c.dropout) {
    return { forward: [elementwiseOp(name, n, 1, 3 * n * c.e)], backward: [] };
  }
  return {
    forward: [elementwiseOp(name, n, 3, 3 * n * c.e + n)],
    backward: [elementwiseOp(`${name}.bwd`, n, 1, 2 * n * c.e + n)],
  };
}

/** GELU (tanh form ≈ 8 FLOPs/element) or SwiGLU (silu(gate)·up ≈ 5) on the per-rank MLP width. */
export function activationStage(c: LayerContext, tokens = c.tokens, width = c.ffnPerRank): Stage {
  const n = tokens * width;
  if (c.gated && c.eager) return eagerSwiglu(c, tokens, width);
  if (c.gated) {
    return {
      forward: [elementwiseOp('swiglu', n, 5, 3 * n * c.e)],
      backward: [elementwiseOp('swiglu.bwd', n, 10, 5 * n * c.e)],
    };
  }
  return {
    forward: [elementwiseOp('gelu', n, 8, 2 * n * c.e)],
    backward: [elementwiseOp('gelu.bwd', n, 16, 3 * n * c.e)],
  };
}
