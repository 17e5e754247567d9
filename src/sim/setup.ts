import type { ClusterSpec } from './hardware/types.js';
import type { ModelSpec } from './workload/model.js';
import type { Algorithm, CollectiveMode, Protocol } from './collectives/types.js';
import type { MeasuredCollectiveTable } from './collectives/measuredTable.js';
import type { PipelineSchedule } from './parallel/schedules.js';
import type { TpStyle } from './parallel/tpSync.js';
import type { TpCommOverlapSms } from './parallel/tpCommOverlap.js';
import type { Placement } from './parallel/layout.js';
import type { CpCommType, KernelMode, RecomputeMode } from './workload/ops.js';
import type { FrameworkSpec } from './workload/framework.js';
import type { AttentionKernelChoice } from './workload/attentionKernels.js';
import type { OptimizerStateTypes } from './memory/optimizerState.js';
import type { Fp8Setup } from './workload/fp8.js';

/**
 * Numeric format of training: mixed precision with bf16/fp16 compute, plain fp32/tf32, or `fp8`: bf16 mixed precision
 * whose transformer layers' linear GEMMs run in FP8 through Transformer Engine (`TrainingSetup.fp8`, workload/fp8.ts).
 */
import type { RoutingSetup } from './workload/routing.js';

export type TrainingPrecision = 'bf16' | 'fp16' | 'fp32' | 'tf32' | 'fp8';

export interface TrainingSetup {
  /** Sequences per optimizer step, over all data-parallel ranks. */
  globalBatch: number;
  /** Sequences per forward/backward pass on one rank. */
  microBatch: number;
  precision: TrainingPrecision;
  optimizer: 'adam' | 'sgd';
  /** The types of the optimizer's state; absent: all fp32. */
  optimizerState?: OptimizerStateTypes;
  flashAttention: boolean;
  seqLen: number;
  /** Element-wise kernels fused (default) or as eager PyTorch issues them (`MicroBatchShape.kernels`). */
  kernels?: KernelMode;
  /** The fused attention kernel when `flashAttention` (`MicroBatchShape.attentionKernel`); absent: `auto`. */
  attentionKernel?: AttentionKernelChoice;
  /** How FP8 runs when `precision` is `fp8` (its recipe and parameter gather); absent otherwise. */
  fp8?: Fp8Setup;
  /** How a model with experts routes its tokens (routing.ts); absent: balanced and dropless. */
  routing?: RoutingSetup;
}

export interface DdpSetup {
  /** PyTorch DDP `bucket_cap_mb` (MiB). */
  bucketMB: number;
  /** Size of the first bucket (PyTorch: 1 MiB, `dist._DEFAULT_FIRST_BUCKET_BYTES`). */
  firstBucketMB: number;
  /** All-reduce buckets during backward (true) or only after it (false). */
  overlap: boolean;
}

/**
 * Whose ZeRO stage 1 it is: DeepSpeed's (`DeepSpeedZeroOptimizer`, buckets of `reduce_bucket_size`) or Megatron's
 * distributed optimizer (its DDP buckets). Stages 2 and 3 are DeepSpeed's either way.
 */
export type ZeroStage1 = 'deepspeed' | 'megatron';

/** DeepSpeed ZeRO communication settings (`zero_optimization` in ds_config). */
export interface ZeroSetup {
  /** Gradient reduce-scatter bucket (`reduce_bucket_size`), MiB. */
  reduceBucketMB: number;
  /** Reduce gradients while backward runs (`overlap_comm`; Megatron's --overlap-grad-reduce at stage 1). */
  overlapComm: boolean;
  /** Which framework's ZeRO-1 (`parallel.zeroConfig.stage1`); absent: `megatron`. */
  stage1?: ZeroStage1;
  /** Whose ZeRO-3 (`parallel.zeroConfig.stage3`), for what it gathers at a time; absent: `fsdp`. */
  stage3?: ZeroStage3;
  /** DeepSpeed ZeRO-3's `stage3_prefetch_bucket_size`, elements; absent: DeepSpeed's default (zero3Collectives.ts). */
  prefetchBucketElements?: number;
  /** DeepSpeed ZeRO-3's `stage3_param_persistence_threshold`, elements; absent: DeepSpeed's default. */
  persistenceThresholdElements?: number;
}

/**
 * Whose ZeRO-3: DeepSpeed's gathers one module's parameters at a time (a Linear, an embedding), PyTorch FSDP's one
 * wrapped unit (a transformer block) and prefetches the next.
 */
export type ZeroStage3 = 'deepspeed' | 'fsdp';

/** How the model is split over the GPUs: tp × pp × dp = GPUs. */
export interface ParallelSetup {
  tp: number;
  pp: number;
  dp: number;
  /**
   * Context-parallel size: the ranks of one replica that split each sequence (ring attention); absent: 1. The
   * gradients are reduced over dp × cp ranks.
   */
  cp?: number;
  /** How the context-parallel ranks communicate (`CpCommType`); present only when cp > 1, absent: `p2p`. */
  cpCommType?: CpCommType;
  /**
   * Expert-parallel size of a model with experts: ranks that split each MoE layer's experts and exchange tokens by
   * all-to-all; the experts keep the attention's tp, so ep divides dp × cp (consecutive ranks of the d axis form a
   * group). Absent: 1.
   */
  ep?: number;
  /**
   * Expert tensor-parallel size (Megatron --expert-tensor-parallel-size): the ranks that split each expert's width.
   * Absent: tp. With one of its own the experts fold over the stage's tp × cp × dp ranks apart from attention's
   * ("MoE parallel folding": expert grid tp-ep-dp over the same ranks).
   */
  etp?: number;
  /**
   * How tokens reach their experts with ep > 1: `alltoall` (absent), an NCCL all-to-all of every token's k copies, or
   * `deepep`, DeepEP's normal kernels (collectives/deepEpDispatch.ts).
   */
  dispatcher?: 'alltoall' | 'deepep';
  /**
   * Combined 1F1B (Megatron --overlap-moe-expert-parallel-comm): a forward and a backward of other micro-batches run as
   * one step, each one's expert all-to-alls in flight while the other computes (combinedPass.ts).
   */
  moeOverlap?: boolean;
  schedule: PipelineSchedule;
  /** Model chunks per pipeline stage (interleaved schedule). */
  virtualStages: number;
  sequenceParallel: boolean;
  /**
   * Transformer Engine's TP communication overlap (Megatron --tp-comm-overlap): the SMs its communication takes beside
   * the GEMMs; absent: off.
   */
  tpCommOverlap?: TpCommOverlapSms;
  tpStyle: TpStyle;
  recompute: RecomputeMode;
  zero: 0 | 1 | 2 | 3;
  offload: 'none' | 'cpu';
  /** 16-bit training with fp32 gradient accumulation and reduction (Megatron's main_grad); absent: false. */
  fp32Gradients?: boolean;
  /** 16-bit gradients reduced in fp32 (DeepSpeed's communication_data_type fp32); absent: false. */
  fp32Reduction?: boolean;
  /**
   * Megatron's --overlap-param-gather: the weight all-gather under the next step's forward (`addParamGathers`); absent:
   * false.
   */
  overlapParamGather?: boolean;
  placement: Placement;
  /** Uneven pipeline split: transformer layers per stage. */
  layersPerStage?: number[];
  /**
   * The even split counts the embedding as a layer (Megatron --account-for-embedding-in-pipeline-split); absent: false.
   */
  accountForEmbeddingInSplit?: boolean;
  /** The even split counts the loss as a layer (Megatron --account-for-loss-in-pipeline-split); absent: false. */
  accountForLossInSplit?: boolean;
  ddp: DdpSetup;
  zeroConfig: ZeroSetup;
}

export interface CommSetup {
  algorithm: Algorithm | 'auto';
  protocol: Protocol | 'auto';
  mode: CollectiveMode;
  /** Measured collective tables of this machine (nccl-tests), used inside one node. */
  measured?: readonly MeasuredCollectiveTable[];
}

/** Everything the simulator needs for one training step: plain, read-only data. */
export interface StepSetup {
  name: string;
  seed: number;
  cluster: ClusterSpec;
  model: ModelSpec;
  training: TrainingSetup;
  parallel: ParallelSetup;
  comm: CommSetup;
  noise: NoiseSetup;
  /**
   * The training framework, when its host-side cost is modelled (workload/framework.ts): every kernel then
   * waits for the host to issue it, and the framework's own kernel sequence is used. Absent: kernels
   * carry their launch overhead and the host is never the bottleneck.
   */
  framework?: FrameworkSpec;
  /**
   * `symmetric` simulates one data-parallel replica and, in it, one rank per tensor-parallel group
   * (one rank per pipeline stage): the ranks of a TP group run the same kernels and meet at every TP
   * collective. The communication of the ranks left out (other replicas, other TP ranks: pipeline
   * sends, gradient reduction) runs as shadow flows, so shared links still see all traffic; `full`
   * simulates every rank. Both need the same work on every rank (no compute jitter).
   */
  fidelity: 'symmetric' | 'full';
}

/** Run-to-run variation; all of it is drawn from seeded streams (DESIGN §4). */
export interface NoiseSetup {
  /** Relative standard deviation of each compute task's duration, per rank and task; 0 for none. */
  computeJitter: number;
  /** Relative standard deviation of each GPU's own speed, drawn once per GPU (`gpuSpeedFactors`); absent: 0. */
  gpuSpeedSpread?: number;
}
