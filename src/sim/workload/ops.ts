import type { Dtype } from '../hardware/types.js';
import type { FrameworkSpec } from './framework.js';
import type { AttentionKernel, AttentionKernelChoice } from './attentionKernels.js';
import type { Fp8Setup } from './fp8.js';

/**
 * The unit of work the compiler places on a compute stream: one kernel (or one fused group of
 * kernels) of one micro-batch on one rank, with its FLOPs and HBM traffic.
 */

export type OpKind = 'gemm' | 'attention' | 'elementwise' | 'optimizer';

/** C[m×n] = A[m×k]·B[k×n], `batch` times (batched GEMM for unfused attention, 1 otherwise). */
export interface GemmShape {
  m: number;
  n: number;
  k: number;
  batch: number;
  /**
   * The widths that are leading dimensions of the operands in memory (cuBLAS's lda/ldb/ldc), which the
   * tensor-core alignment applies to (kernelTime.ts `gemmMisaligned`); absent: m, n and k. A linear layer's are
   * its input and output features: the token count is never one (PyTorch passes it as cuBLAS's n, op N).
   */
  leadingDims?: number[];
}

/** A fused (flash-style) attention kernel, per rank. */
export interface AttentionShape {
  /** Independent (batch × query head) problems: b·a/t. */
  batchHeads: number;
  /** The whole sequence (its length sets the causal share). */
  seqLen: number;
  /** Query rows one kernel call works on, when fewer than `seqLen` (one step of ring attention: s/cp). */
  queryLen?: number;
  headDim: number;
  /** Causal masking: flash kernels skip the fully masked tiles, executing about half of `flops`. */
  causal: boolean;
  backward: boolean;
  /** The kernel that runs it (attentionKernels.ts); absent: FlashAttention-2. */
  kernel?: AttentionKernel;
}

export interface Op {
  /** Short name inside its block: `qkv`, `qkv.dgrad`, `attn.core`, `recompute.fc1`, … */
  name: string;
  kind: OpKind;
  /**
   * Floating-point operations by the usual counting convention (2 per multiply-add, full s×s for
   * attention scores even when causal, backward = 2× forward), so sums match Megatron's closed form.
   */
  flops: number;
  /** HBM bytes read + written. */
  bytes: number;
  /**
   * Fraction of the GPU's streaming-kernel bandwidth (peak × hbmEfficiency) this kernel's memory traffic
   * reaches; 1 when absent. Below 1 for kernels measured to stream less well (kernelTime.ts).
   */
  bandwidthFactor?: number;
  /**
   * A published ratio of this work's time in the kernel that really runs to the time of the kernels the op is modelled
   * as (the memory-efficient attention kernel against unfused attention, attentionKernels.ts); 1 when absent.
   */
  timeFactor?: number;
  /**
   * Elements a PyTorch generic element-wise kernel indexes (broadcast or permuted operands, upward casts, cat): such a
   * kernel takes at least these elements at the GPU's generic-kernel rate (kernelTime.ts `genericKernelNs`).
   */
  genericElements?: number;
  gemm?: GemmShape;
  /** The dtype this GEMM runs in when it is not the step's (an FP8 GEMM of a bf16 step, fp8.ts); absent: the step's. */
  dtype?: Dtype;
  attention?: AttentionShape;
  /** Trainable tensors whose gradients are complete when this (backward) op finishes. */
  gradParams?: string[];
  /**
   * Host time to issue this op (all the framework calls it stands for), ns; set only when a framework
   * is modelled (`MicroBatchShape.framework`). The op's kernel cannot start before the host has issued it.
   */
  hostNs?: number;
  /** The host waits for the GPU's compute stream to drain before issuing this op (a blocking copy). */
  hostSync?: boolean;
  /**
   * SMs a GEMM leaves to a communication kernel that runs beside it (Transformer Engine's userbuffers overlap with
   * `set_sm_margin`); the GEMM runs its waves on the rest.
   */
  smMargin?: number;
}

/** A group of ops that belong together: the embedding, one transformer layer, or the head + loss. */
export interface Block {
  name: string;
  /** −1 for embeddings, 0…layers−1 for transformer layers, `layers` for the final norm / head. */
  layer: number;
  forward: Op[];
  /** In execution order (the reverse of forward), recompute ops first. */
  backward: Op[];
}

export type RecomputeMode = 'none' | 'selective' | 'full';

/**
 * Context parallelism's communication, as Megatron's `--cp-comm-type` picks Transformer Engine's implementation
 * (transformer_engine/pytorch/attention/dot_product_attention/context_parallel.py):
 * - `p2p`: ring attention (`AttnFuncWithCPAndKVP2P`): key/value blocks go round the ring, each send overlapping one
 *   of cp kernel calls (the default);
 * - `all_gather`: keys and values all-gathered before attention (`AttnFuncWithCPAndKVAllGather`; Llama 3's choice,
 *   arXiv 2407.21783 §3.3.2), two kernel calls for the rank's two chunks, key/value gradients reduce-scattered;
 * - `a2a`: all-to-all of queries, keys and values so that each rank attends over the whole sequence for 1/cp of
 *   the heads, and of the output back (`AttnFuncWithCPAndQKVOA2A`, DeepSpeed-Ulysses style).
 */
export type CpCommType = 'p2p' | 'all_gather' | 'a2a';

export const CP_COMM_TYPES: readonly CpCommType[] = ['p2p', 'all_gather', 'a2a'];

/** What one micro-batch looks like on one rank. */
export interface MicroBatchShape {
  microBatch: number;
  seqLen: number;
  /** Context-parallel ranks the sequence is split over; absent: 1. */
  cp?: number;
  /** How the context-parallel ranks exchange what attention needs (`CpCommType`); absent: `p2p`. */
  cpCommType?: CpCommType;
  dtype: Dtype;
  /** Tensor-parallel degree t (Megatron split). */
  tp: number;
  /** Megatron sequence parallelism: norms, dropout and residuals work on s/t tokens. */
  sequenceParallel: boolean;
  /** Expert-parallel ranks a model's experts are split over (moe.ts); absent: 1. */
  ep?: number;
  /** Expert tensor-parallel ranks each expert's width is split over; absent: tp. */
  etp?: number;
  /**
   * Per layer, the token–expert pairs the busiest expert-parallel rank computes against the balanced share (routing.ts
   * `busiestFactor`); absent, or a layer's undefined: 1 (balanced).
   */
  expertLoadFactors?: readonly (number | undefined)[];
  /** The expert dispatcher (`parallel.dispatcher`); absent: Megatron-Core's all-to-all. */
  dispatcher?: 'alltoall' | 'deepep';
  flashAttention: boolean;
  recompute: RecomputeMode;
  /** The training framework's host costs and code paths (framework.ts); absent: framework-agnostic ops. */
  framework?: FrameworkSpec;
  /**
   * How element-wise work runs: `fused` (default) one kernel per norm, rotary embedding and activation, as compiled
   * or fused-kernel frameworks run them; `eager` Llama's as eager PyTorch modules issue them (eagerOps.ts).
   */
  kernels?: KernelMode;
  /** The fused attention kernel when `flashAttention` (attentionKernels.ts); absent: `auto`. */
  attentionKernel?: AttentionKernelChoice;
  /** FP8 training: the transformer layers' linear GEMMs in FP8, with their quantize kernels (fp8.ts); absent: none. */
  fp8?: Fp8Setup;
}

/** See `MicroBatchShape.kernels`. */
export type KernelMode = 'fused' | 'eager';

/** Bytes of one element stored in `dtype` (tf32 is stored as fp32). */
export function dtypeBytes(dtype: Dtype): number {
  switch (dtype) {
    case 'fp32':
    case 'tf32':
      return 4;
    case 'fp16':
    case 'bf16':
      return 2;
    case 'fp8':
      return 1;
  }
}

/**
 * Bytes of one stored activation element. FP8 training (Transformer Engine) runs the GEMMs in FP8 but
 * keeps activations, norms and residuals in BF16, so fp8 counts 2.
 */
export function activationElementBytes(dtype: Dtype): number {
  return dtype === 'fp8' ? 2 : dtypeBytes(dtype);
}

/** A GEMM op: 2·m·n·k·batch FLOPs; reads A and B in `dtype`, writes C as an activation. */
/* eslint-disable-next-line max-params -- the shape and the tensors of one GEMM or linear layer, as the model
 * builders list them */
export function gemmOp(
  name: string,
  m: number,
  n: number,
  k: number,
  batch: number,
  dtype: Dtype,
  gradParams?: string[],
  leadingDims?: number[],
): Op {
  const inB = dtypeBytes(dtype);
  const outB = activationElementBytes(dtype);
  const op: Op = {
    name,
    kind: 'gemm',
    flops: 2 * m * n * k * batch,
    bytes: batch * ((m * k + k * n) * inB + m * n * outB),
    gemm: leadingDims ? { m, n, k, batch, leadingDims } : { m, n, k, batch },
  };
  if (gradParams && gradParams.length > 0) op.gradParams = gradParams;
  return op;
}

/** A memory-bound op over `elements` values with `flopsPerElement` and the given HBM traffic. */
export function elementwiseOp(
  name: string,
  elements: number,
  flopsPerElement: number,
  bytes: number,
  gradParams?: string[],
): Op {
  const op: Op = { name, kind: 'elementwise', flops: elements * flopsPerElement, bytes };
  if (gradParams && gradParams.length > 0) op.gradParams = gradParams;
  return op;
}

/** Forward op(s) of one stage of a block and the backward ops that undo it, in execution order. */
export interface Stage {
  forward: Op[];
  backward: Op[];
}

/**
 * A linear layer Y[T×out] = X[T×in]·W[in×out] (+ bias): forward GEMM, then dgrad (dX = dY·Wᵀ) and
 * wgrad (dW = Xᵀ·dY, which completes `params`). Backward is 2× forward FLOPs. `needInputGrad` false
 * drops the dgrad (first layer of a model whose input is data).
 */
/* eslint-disable-next-line max-params -- the shape and the tensors of one GEMM or linear layer, as the model
 * builders list them */
export function linearStage(
  name: string,
  tokens: number,
  inF: number,
  outF: number,
  dtype: Dtype,
  params: string[],
  needInputGrad = true,
): Stage {
  const backward: Op[] = [];
  const lead = [inF, outF];
  // Megatron computes dgrad first so the TP all-reduce of dX overlaps the wgrad GEMM.
  if (needInputGrad) backward.push(gemmOp(`${name}.dgrad`, tokens, inF, outF, 1, dtype, undefined, lead));
  backward.push(gemmOp(`${name}.wgrad`, inF, outF, tokens, 1, dtype, params, lead));
  return { forward: [gemmOp(name, tokens, outF, inF, 1, dtype, undefined, lead)], backward };
}

/** Concatenates stages into a block: forward in order, backward in reverse stage order. */
export function assembleBlock(name: string, layer: number, stages: Stage[], recompute: Op[] = []): Block {
  const forward: Op[] = [];
  for (const s of stages) forward.push(...s.forward);
  const backward: Op[] = recompute.map((op) => {
    const copy: Op = { ...op, name: `recompute.${op.name}` };
    delete copy.gradParams;
    return copy;
  });
  for (let i = stages.length - 1; i >= 0; i--) backward.push(...stages[i].backward);
  return { name, layer, forward, backward };
}

/** Sum of `flops` over the forward and backward ops of `blocks`. */
export function blocksFlops(blocks: readonly Block[]): number {
  let f = 0;
  for (const b of blocks) {
    for (const op of b.forward) f += op.flops;
    for (const op of b.backward) f += op.flops;
  }
  return f;
}
