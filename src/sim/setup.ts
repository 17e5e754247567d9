import type { ClusterSpec } from './hardware/types.js';
import type { ModelSpec } from './workload/model.js';
import type { Algorithm, CollectiveMode, Protocol } from './collectives/types.js';

/** Numeric format of training: mixed precision with bf16/fp16 compute, or plain fp32/tf32. */
export type TrainingPrecision = 'bf16' | 'fp16' | 'fp32' | 'tf32';

export interface TrainingSetup {
  /** Sequences per optimizer step, over all data-parallel ranks. */
  globalBatch: number;
  /** Sequences per forward/backward pass on one rank. */
  microBatch: number;
  precision: TrainingPrecision;
  optimizer: 'adam' | 'sgd';
  flashAttention: boolean;
  seqLen: number;
}

export interface DdpSetup {
  /** PyTorch DDP `bucket_cap_mb` (MiB). */
  bucketMB: number;
  /** Size of the first bucket (PyTorch: 1 MiB, `dist._DEFAULT_FIRST_BUCKET_BYTES`). */
  firstBucketMB: number;
  /** All-reduce buckets during backward (true) or only after it (false). */
  overlap: boolean;
}

export interface CommSetup {
  algorithm: Algorithm | 'auto';
  protocol: Protocol | 'auto';
  mode: CollectiveMode;
}

/** Everything the simulator needs for one training step: plain, read-only data. */
export interface StepSetup {
  name: string;
  seed: number;
  cluster: ClusterSpec;
  model: ModelSpec;
  training: TrainingSetup;
  parallel: { dp: number; ddp: DdpSetup };
  comm: CommSetup;
  noise: NoiseSetup;
}

/** Run-to-run variation; all of it is drawn from seeded streams (DESIGN §4). */
export interface NoiseSetup {
  /** Relative standard deviation of each compute task's duration, per rank and task; 0 for none. */
  computeJitter: number;
}
