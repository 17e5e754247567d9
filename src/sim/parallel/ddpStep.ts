import { MiB } from '../engine/units.js';
import { jitterer } from '../engine/random.js';
import type { Dtype } from '../hardware/types.js';
import { Program } from '../program/types.js';
import type { StepSetup } from '../setup.js';
import { parameterTensors } from '../workload/model.js';
import { buildBlocks } from '../workload/transformerOps.js';
import { opTimeNs, optimizerOp } from '../workload/kernelTime.js';
import { assignBuckets, type GradBucket } from './buckets.js';
import { timeBlocks, type TimedBlock } from './blockTimes.js';

/** What the compiler produced besides the program, for reports and tests. */
export interface DdpStepInfo {
  program: Program;
  buckets: GradBucket[];
  blocks: TimedBlock[];
  microBatchesPerStep: number;
  paramsPerRank: number;
  /** Bytes of one gradient element (2 in mixed precision, 4 in fp32). */
  gradBytesPerElement: number;
}

/** The dtype the GEMMs run in for a training precision. */
export function computeDtype(precision: StepSetup['training']['precision']): Dtype {
  return precision;
}

/**
 * Compiles one data-parallel training step as PyTorch DDP runs it: each rank runs forward and
 * backward of its micro-batches on the compute stream; during the last micro-batch's backward
 * (earlier ones run under `no_sync`), each gradient bucket's all-reduce is queued on the comm
 * stream once every rank has produced all its gradients (or after the whole backward when
 * `overlap` is off); the optimizer step waits for the last bucket. With `noise.computeJitter`, each
 * rank's compute tasks are stretched or shrunk by draws from that rank's own seeded stream, in
 * program order, so a seed always gives the same step.
 */
export function compileDdpStep(setup: StepSetup): DdpStepInfo {
  const { model, training, parallel, cluster } = setup;
  const dp = parallel.dp;
  const gpu = cluster.node.gpu;
  const dtype = computeDtype(training.precision);
  const microBatches = training.globalBatch / (training.microBatch * dp);
  const blocks = timeBlocks(
    buildBlocks(model, { microBatch: training.microBatch, seqLen: training.seqLen, dtype, tp: 1, sequenceParallel: false, flashAttention: training.flashAttention, recompute: 'none' }),
    gpu,
    dtype,
  );
  const tensors = parameterTensors(model);
  const paramsPerRank = tensors.reduce((a, t) => a + t.elements, 0);
  const mixed = training.precision === 'bf16' || training.precision === 'fp16';
  const gradBytesPerElement = mixed ? 2 : 4;
  const buckets = assignBuckets(tensors, gradBytesPerElement, parallel.ddp.firstBucketMB * MiB, parallel.ddp.bucketMB * MiB);

  // Where in the backward sequence each tensor's gradient completes.
  const segmentOfTensor = new Map<string, number>();
  let segments = 0;
  for (let b = blocks.length - 1; b >= 0; b--) {
    for (const seg of blocks[b].backward) {
      for (const t of seg.gradTensors) segmentOfTensor.set(t, segments);
      segments++;
    }
  }
  const bucketSegment = buckets.map((bk) => Math.max(...bk.tensors.map((t) => segmentOfTensor.get(t) ?? segments - 1)));

  const program = new Program(dp);
  const group = [...Array(dp).keys()];
  const lastBackward: number[][] = [];
  for (let r = 0; r < dp; r++) {
    const jitter = jitterer(setup.seed, `compute-jitter/rank-${r}`, setup.noise.computeJitter);
    let ids: number[] = [];
    for (let m = 0; m < microBatches; m++) {
      for (const b of blocks) program.local(r, 'compute', 'forward', `fwd ${b.name} mb${m}`, jitter(b.forwardNs), [], m);
      ids = [];
      for (let b = blocks.length - 1; b >= 0; b--) {
        for (const seg of blocks[b].backward) {
          ids.push(program.local(r, 'compute', seg.recompute ? 'recompute' : 'backward', `bwd ${blocks[b].name} mb${m}`, jitter(seg.durationNs), [], m));
        }
      }
    }
    lastBackward.push(ids);
  }

  let lastComm = -1;
  if (dp > 1) {
    for (const bk of buckets) {
      const deps = lastBackward.map((ids) => ids[parallel.ddp.overlap ? bucketSegment[bk.index] : ids.length - 1]);
      lastComm = program.collective('dp-allreduce', `all-reduce bucket ${bk.index} (${(bk.bytes / MiB).toFixed(1)} MiB)`, { op: 'all_reduce', group, bytes: bk.bytes }, deps);
    }
  }
  const optNs = opTimeNs(optimizerOp(paramsPerRank, { optimizer: training.optimizer, precision: mixed ? 'mixed' : 'fp32' }), gpu, 'fp32');
  for (let r = 0; r < dp; r++) program.local(r, 'compute', 'optimizer', 'optimizer step', optNs, lastComm >= 0 ? [lastComm] : []);
  return { program, buckets, blocks, microBatchesPerStep: microBatches, paramsPerRank, gradBytesPerElement };
}
