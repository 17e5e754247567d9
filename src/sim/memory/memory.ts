import { MiB } from '../engine/units.js';
import { largestLayerParameters, largestModuleParameters, type ModelSpec } from '../workload/model.js';
import type { ZeroStage3 } from '../setup.js';

export {
  activationBytesPerLayer,
  activationBytesPerRank,
  embeddingActivationBytes,
  headActivationBytes,
  korthikantiBytesPerLayer,
  type ActivationShape,
  type StageActivationOptions,
} from './activations.js';

/** Per-GPU memory account (docs/modelling.md). */

export type Precision = 'mixed' | 'fp32';
export type OptimizerKind = 'adam' | 'sgd';
export type ZeroStage = 0 | 1 | 2 | 3;
/**
 * `zero-paper`: the model-state formulas of Rajbhandari et al., "ZeRO" (SC20) §5.
 * `deepspeed`: what DeepSpeed allocates per its own estimator (docs `memory.rst`,
 * `estimate_zero2_model_states_mem_needs` / `estimate_zero3_…`): an fp32 gradient partition in stages 1–2
 * (4P + 16P/N) and 18P/N + 4·(largest layer) in stage 3. Applies to mixed-precision Adam only.
 */
export type MemoryAccounting = 'zero-paper' | 'deepspeed';

/** Bytes per parameter of each model-state part, before sharding. */
export interface StateBytesPerParam {
  weights: number;
  gradients: number;
  optimizer: number;
}

/**
 * Model-state bytes per parameter. Mixed-precision Adam (Micikevicius et al. 2018; ZeRO §3.1): 16-bit
 * weights 2 + 16-bit gradients 2 + fp32 master weights, momentum and variance 4 + 4 + 4 = 16.
 * fp32 Adam: 4 + 4 + 8 (m, v). SGD with momentum keeps one buffer (4), plus the fp32 master when mixed.
 */
export const STATE_BYTES_PER_PARAM: Record<Precision, Record<OptimizerKind, StateBytesPerParam>> = {
  mixed: { adam: { weights: 2, gradients: 2, optimizer: 12 }, sgd: { weights: 2, gradients: 2, optimizer: 8 } },
  fp32: { adam: { weights: 4, gradients: 4, optimizer: 8 }, sgd: { weights: 4, gradients: 4, optimizer: 4 } },
};

/**
 * Memory a training process holds before any tensor of the model (CUDA context and runtime
 * workspaces), per GPU:
 * - CUDA context with the PyTorch, cuBLAS and NCCL kernels loaded lazily (CUDA ≥ 11.7 lazy loading):
 *   ~512 MiB, the order PyTorch users observe on A100/H100 (more with eager module loading);
 * - cuBLAS(Lt) workspaces: 32 MiB per handle/stream on Hopper (NVIDIA cuBLAS docs, cublasSetWorkspace;
 *   PyTorch PR #120925), 4 streams → 128 MiB;
 * - NCCL: NCCL_BUFFSIZE is 4 MiB per channel per peer (NCCL environment-variable docs); a ring on 32
 *   channels with 2 peers is 256 MiB per communicator; DP + TP (+ PP) → 512 MiB.
 * The caching allocator's fragmentation is not included.
 */
export const CUDA_CONTEXT_BYTES = 512 * MiB;
export const CUBLAS_WORKSPACE_BYTES = 128 * MiB;
export const NCCL_BUFFER_BYTES = 512 * MiB;
export const RUNTIME_RESERVE_BYTES = CUDA_CONTEXT_BYTES + CUBLAS_WORKSPACE_BYTES + NCCL_BUFFER_BYTES;

/**
 * Bucket buffers held at once when the caller does not say: one being filled by backward while the other is reduced.
 */
export const BUCKETS_IN_FLIGHT = 2;

export interface MemoryInput {
  model: ModelSpec;
  /** Parameters this rank holds after tensor and pipeline splitting, before ZeRO sharding (P). */
  paramsPerRank: number;
  /** Data-parallel degree N, over which ZeRO shards. */
  dp: number;
  /**
   * The parameters whose states ZeRO shards, counted in shares of N: P, except that a routed expert's parameter,
   * sharded over the N / ep expert-data-parallel ranks, counts ep times (its share is ep/N). Default P.
   */
  shardedParamsPerRank?: number;
  zero: ZeroStage;
  precision: Precision;
  optimizer: OptimizerKind;
  /** Peak activation bytes on this rank (see `activationBytesPerRank`). */
  activationBytes: number;
  /** Size of one gradient communication bucket (DDP `bucket_cap_mb`, DeepSpeed `reduce_bucket_size`). */
  bucketBytes: number;
  /**
   * Bucket buffers held beside the gradients (default {@link BUCKETS_IN_FLIGHT}; each framework's: `reductionBuffers`).
   */
  bucketsInFlight?: number;
  /**
   * Bytes of each held bucket's copy in the reduction's type, per bucket byte: 2 when 16-bit buckets are reduced in
   * fp32 (DeepSpeed's communication_data_type fp32 converts each one before its collective); default 0.
   */
  reductionCopyPerBucketByte?: number;
  /** Tensor-parallel degree, to size the largest layer's shard for ZeRO-3 (default 1). */
  tp?: number;
  /** ZeRO-3: parameters of the largest layer, whole (default: from the model). */
  largestLayerParams?: number;
  /** Whose ZeRO-3, for what it gathers at a time (`ZeroStage3`); default `fsdp`. */
  zero3?: ZeroStage3;
  /** ZeRO-Offload: optimizer state and fp32 master weights live in host memory. */
  offloadOptimizer?: boolean;
  /** Bytes per gradient element in place of the precision's (4 for Megatron's fp32 main_grad with 16-bit training). */
  gradientBytesPerParam?: number;
  /** Optimizer-state bytes per parameter in place of the all-fp32 state's (`optimizerStateBytesPerParam`). */
  optimizerBytesPerParam?: number;
  /**
   * PyTorch DDP with `gradient_as_bucket_view=False` (its default) copies gradients into separate
   * flat buckets, another gradient-sized buffer. Default false (bucket views, as Megatron and FSDP do).
   */
  ddpBucketCopy?: boolean;
  accounting?: MemoryAccounting;
  /** Runtime reserve (default {@link RUNTIME_RESERVE_BYTES}). */
  reserveBytes?: number;
  /** Working memory of context-parallel attention for one layer (`cpBufferBytes`); default 0. */
  attentionBufferBytes?: number;
}

export interface MemoryBreakdown {
  weightsBytes: number;
  gradientsBytes: number;
  optimizerBytes: number;
  activationsBytes: number;
  /**
   * Communication buckets, for ZeRO-3 the gathered (current + prefetched) layer, context parallelism's attention
   * buffers.
   */
  buffersBytes: number;
  reserveBytes: number;
  totalBytes: number;
}

/**
 * ZeRO-3's gathered 16-bit parameters. FSDP: the block being computed and the one prefetched, two blocks of weights.
 * DeepSpeed: one module at a time, so at most its largest module's weights and, in backward, their gradient before it
 * is reduced, in the weights' type: 4 bytes × the largest module in 16-bit training, as DeepSpeed's own estimator sizes
 * it (`estimate_zero3_model_states_mem_needs`, 4 × largest layer, with the layer per module).
 */
function zero3GatheredBytes(input: MemoryInput, weightBytes: number, largestBlock: number, P: number): number {
  if (input.zero3 === 'deepspeed')
    return 2 * weightBytes * Math.min(largestModuleParameters(input.model, input.tp ?? 1), P);
  return 2 * weightBytes * Math.min(largestBlock, P);
}

/**
 * Memory per GPU. Model states with N = dp ranks (ZeRO, Rajbhandari et al. 2020, §5.1; mixed Adam):
 * stage 0: 16P; stage 1: 4P + 12P/N; stage 2: 2P + 14P/N; stage 3: 16P/N. ZeRO-3 also holds the
 * gathered 16-bit parameters of the layer being computed and of the one prefetched.
 */
export function memoryPerGpu(input: MemoryInput): MemoryBreakdown {
  const P = input.paramsPerRank;
  const N = input.dp;
  // P / N for the dense states, ep·P_expert / N for the experts': a share of N of the sharded-parameter count.
  const sharded = (input.shardedParamsPerRank ?? P) / N;
  const states = STATE_BYTES_PER_PARAM[input.precision][input.optimizer];
  const per = {
    ...states,
    gradients: input.gradientBytesPerParam ?? states.gradients,
    optimizer: input.optimizerBytesPerParam ?? states.optimizer,
  };
  const deepspeed = input.accounting === 'deepspeed' && input.precision === 'mixed' && input.optimizer === 'adam';
  const z = input.zero;

  let weightsBytes = z >= 3 ? per.weights * sharded : per.weights * P;
  let gradientsBytes = z >= 2 ? per.gradients * sharded : per.gradients * P;
  let optimizerBytes = z >= 1 ? per.optimizer * sharded : per.optimizer * P;

  const largest = (input.largestLayerParams ?? largestLayerParameters(input.model)) / (input.tp ?? 1);
  let gathered = 0;
  if (z === 3) gathered = zero3GatheredBytes(input, per.weights, largest, P);

  if (deepspeed && z >= 1) {
    if (z <= 2) {
      // 4P + 16P/N: full 16-bit weights and gradients, fp32 gradient partition 4P/N, optimizer 12P/N.
      weightsBytes = 2 * P;
      gradientsBytes = 2 * P + (4 * P) / N;
    } else {
      // 18P/N + 4·largest layer (its 16-bit parameters and gradients gathered), the layer being a module.
      gradientsBytes = (4 * P) / N;
      gathered = 4 * Math.min(largestModuleParameters(input.model, input.tp ?? 1), P);
    }
    optimizerBytes = per.optimizer * sharded;
  }
  if (input.offloadOptimizer) {
    // The optimizer and the reduced gradient partition live on the host (offloadHostBytes): from ZeRO-2 on, the GPU
    // keeps only the buckets in flight (DeepSpeed's estimators with cpu_offload: 2P for ZeRO-2, 2P/N + 4·largest layer
    // for ZeRO-3). ZeRO-1 keeps its full 16-bit gradients until the step.
    optimizerBytes = 0;
    if (z >= 2) gradientsBytes = 0;
    else if (deepspeed) gradientsBytes = 2 * P;
  }

  // A bucket holds at most all of the rank's gradients, and there are only as many buckets as that fills.
  const gradientBytesToReduce = per.gradients * P;
  const bucketBytes = Math.min(input.bucketBytes, gradientBytesToReduce);
  const bucketsHeld =
    bucketBytes > 0
      ? Math.min(input.bucketsInFlight ?? BUCKETS_IN_FLIGHT, Math.ceil(gradientBytesToReduce / bucketBytes))
      : 0;
  let buffersBytes =
    bucketsHeld * bucketBytes * (1 + (input.reductionCopyPerBucketByte ?? 0)) +
    gathered +
    (input.attentionBufferBytes ?? 0);
  if (input.ddpBucketCopy && z === 0) buffersBytes += per.gradients * P;

  const activationsBytes = input.activationBytes;
  const reserveBytes = input.reserveBytes ?? RUNTIME_RESERVE_BYTES;
  return {
    weightsBytes,
    gradientsBytes,
    optimizerBytes,
    activationsBytes,
    buffersBytes,
    reserveBytes,
    totalBytes: weightsBytes + gradientsBytes + optimizerBytes + activationsBytes + buffersBytes + reserveBytes,
  };
}

/** fp32 gradient bytes per parameter that optimizer offload copies to the host for the update. */
export const OFFLOAD_HOST_GRADIENT_BYTES = 4;

/**
 * Host bytes one rank's optimizer offload holds during training (0 without offload), over its ZeRO shard, as DeepSpeed
 * allocates them:
 * - the fp32 weights CPU-Adam updates and the optimizer state (momentum and variance for Adam);
 * - the fp32 gradient partition the update reads (stage_1_and_2.py `initialize_optimizer_states`; stage3.py
 *   `subgroup_gradient_buffer`);
 * - a partition in the weights' type: at stages 1–2 the buffer the updated weights are staged in before their copy
 *   back (stage_1_and_2.py `param_buffer_of_bit16_for_cpu_offload_groups`), at stage 3 the gradient-accumulation
 *   partition, which lives on the host under offload (stage3.py `grad_partitions_flat_buffer`, in grad_accum_dtype,
 *   by default the model's);
 * - at stages 1–2 with more than one micro-batch, the gradients accumulated between them, in the weights' type
 *   (stage_1_and_2.py `async_accumulate_grad_in_cpu_via_gpu`, `accumulated_grads_in_cpu`).
 * Mixed-precision Adam: 18P/N (20P/N at stages 1–2 with accumulation). DeepSpeed's own estimator
 * (`estimate_zero3_model_states_mem_needs`: 16 × params / nodes, × 1.5 buffer factor) leaves the 16-bit buffers out.
 * Not counted: the peak while the model is loaded, before it is partitioned, which a loader can avoid.
 */
export function offloadHostBytes(
  input: Pick<
    MemoryInput,
    | 'paramsPerRank'
    | 'shardedParamsPerRank'
    | 'dp'
    | 'zero'
    | 'precision'
    | 'optimizer'
    | 'offloadOptimizer'
    | 'optimizerBytesPerParam'
  > & { microBatches?: number },
): number {
  if (!input.offloadOptimizer) return 0;
  const optimizerBytes =
    input.optimizerBytesPerParam ?? STATE_BYTES_PER_PARAM[input.precision][input.optimizer].optimizer;
  // The experts' state is sharded over their own data-parallel ranks (`shardedParamsPerRank`).
  const shard = input.zero >= 1 ? (input.shardedParamsPerRank ?? input.paramsPerRank) / input.dp : input.paramsPerRank;
  // Mixed precision counts the fp32 master weights in its optimizer state; in fp32 they are the weights.
  const fp32Weights = input.precision === 'fp32' ? 4 : 0;
  const weightType = STATE_BYTES_PER_PARAM[input.precision][input.optimizer].weights;
  const accumulation = input.zero <= 2 && (input.microBatches ?? 1) > 1 ? weightType : 0;
  return (optimizerBytes + fp32Weights + OFFLOAD_HOST_GRADIENT_BYTES + weightType + accumulation) * shard;
}

/** Model-state bytes (weights + gradients + optimizer) of a breakdown. */
export function modelStateBytes(m: MemoryBreakdown): number {
  return m.weightsBytes + m.gradientsBytes + m.optimizerBytes;
}
