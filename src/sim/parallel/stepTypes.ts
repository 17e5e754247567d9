import type { Program } from '../program/types.js';
import type { Block } from '../workload/ops.js';
import type { GradBucket } from './buckets.js';
import type { ParallelLayout } from './layout.js';
import type { PipeOp } from './schedules.js';
import type { StepContext } from './stepContext.js';
import type { PassTemplate } from './blockTemplate.js';

/** What the compiler produced besides the program, for reports, memory and tests. */
export interface StepPlan {
  program: Program;
  layout: ParallelLayout;
  microBatchesPerStep: number;
  /** Per pipeline stage: its blocks (all chunks), schedule and peak passes in flight. */
  stages: StagePlan[];
}

export interface StagePlan {
  stage: number;
  /** Blocks of each chunk of this stage (chunk c is virtual stage c·pp + stage). */
  chunks: Block[][];
  schedule: PipeOp[];
  /** Most (micro-batch, chunk) forwards alive at once: sets activation memory. */
  peakInFlight: number;
  gradients: StageGradients;
}

/** Gradient bookkeeping of one pipeline stage (the same for every TP rank). */
export interface StageGradients {
  buckets: GradBucket[];
  /** Parameters one rank of this stage holds (after TP, before ZeRO sharding). */
  paramsPerRank: number;
  /** TP collectives still outstanding after the last pass; the optimizer waits for them. */
  pendingTp?: number[];
  /**
   * Per simulated TP rank, the first stage's last gradient communication and optimizer tasks: with tied embeddings
   * and a pipeline, the embedding-gradient all-reduce with the last stage comes between them.
   */
  tiedEnds?: { done: number[][]; optimizers: number[][] };
}

/** The tasks one pass (F or B of one micro-batch through one model chunk) became, per TP rank. */
export interface PassRecord {
  first: number[];
  last: number[];
  /**
   * Per TP rank: the host task that follows the host's wait for the GPU at the start of a pass (`passStart`);
   * the activations or gradients this pass receives gate it too.
   */
  firstHost?: number[];
  /**
   * With TP and no sequence parallelism: the all-gather of the 1/t shards this pass received (Megatron's
   * scatter/gather), on the members' compute streams ahead of the pass; the transfers gate it.
   */
  gather?: number;
  /** Per block in execution order: its first and last compute task per TP rank. */
  blocks: BlockTasks[];
  /** Per TP rank: tensor name → the compute task completing its gradient (backward passes). */
  gradTask?: Map<string, number>[];
}

/** A block's first and last compute task per TP rank, in one pass. */
export interface BlockTasks {
  block: Block;
  first: number[];
  last: number[];
}

/** Key of a pass: data-parallel replica, virtual stage, micro-batch, direction. */
export type PassKey = (d: number, vs: number, mb: number, kind: 'F' | 'B') => string;

/**
 * What every part of the step compiler works on: the step's facts, the program it adds tasks to, the passes made so
 * far and which ranks are simulated. Symmetric mode simulates one data-parallel replica and, in it, one rank per TP
 * group; the other ranks' traffic runs as shadow flows.
 */
export interface CompileScope {
  ctx: StepContext;
  program: Program;
  layout: ParallelLayout;
  passes: Map<string, PassRecord>;
  key: PassKey;
  /** Replicas (on the layout's d axis: data-parallel × context-parallel) simulated: all in full fidelity, else 1. */
  simulatedReplicas: number;
  /** Ranks simulated in each TP group: all in full fidelity or with jitter, else 1. */
  simulatedTp: number;
  /** The simulated ranks (the program's), as a set. */
  simulatedSet: ReadonlySet<number>;
  /** Whether a shadow group's traffic can meet simulated traffic (`needsShadow`). */
  needsShadow: (group: readonly number[]) => boolean;
  /** Each rank's kernel-time factor from the spread of GPU speeds (`gpuSpeedFactors`; 1 without a spread). */
  speedOf: (rank: number) => number;
}

/** Each block's templates for its forward and its backward pass. */
export type PassTemplates = Map<Block, { F: PassTemplate; B: PassTemplate }>;
