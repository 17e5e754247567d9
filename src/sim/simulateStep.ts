import { Simulator } from './engine/simulator.js';
import { MiB } from './engine/units.js';
import { buildTopology } from './network/topology.js';
import { FlowNetwork } from './network/flowNetwork.js';
import { CollectiveService } from './collectives/collectiveService.js';
import { ProgramExecutor } from './program/executor.js';
import type { Trace } from './program/trace.js';
import { compileDdpStep, computeDtype, type DdpStepInfo } from './parallel/ddpStep.js';
import { meanBreakdown, rankBreakdowns } from './stats/breakdown.js';
import { memoryPerGpu, type MemoryBreakdown } from './memory/memory.js';
import { activationBytesPerRank } from './memory/activations.js';
import { modelFlopsPerStep, hardwareFlopsPerStep } from './workload/flops.js';
import type { StepSetup } from './setup.js';
import type { Topology } from './network/types.js';

/** The result of simulating one training step; `toJson` in the CLI prints it. */
export interface StepResult {
  name: string;
  seed: number;
  gpus: number;
  stepTimeS: number;
  samplesPerS: number;
  tokensPerS: number;
  /** Model FLOPs (no recompute) per second per GPU, in TFLOP/s. */
  tflopsPerGpu: number;
  /** FLOPs the GPUs execute (with recompute) per second per GPU, in TFLOP/s. */
  hardwareTflopsPerGpu: number;
  /** Model FLOPs utilisation against the dense peak of the compute dtype. */
  mfu: number;
  memory: {
    peakBytesPerGpu: number;
    capacityBytes: number;
    fits: boolean;
    /** How much is missing when it does not fit (0 when it fits). */
    shortfallBytes: number;
    breakdown: MemoryBreakdown;
  };
  /** Mean over ranks; computeS + exposedCommS + idleS = stepTimeS. */
  breakdown: { computeS: number; exposedCommS: number; idleS: number; commS: number };
  modelParams: number;
  microBatchesPerStep: number;
  buckets: { count: number; meanBytes: number };
  /** How the DP gradient all-reduce was carried out (algorithm/protocol of the largest bucket). */
  gradientAllReduce?: { algorithm: string; protocol: string };
  eventsFired: number;
}

/** What a step simulation leaves behind for reports. */
export interface StepRun {
  result: StepResult;
  trace: Trace;
  info: DdpStepInfo;
  topology: Topology;
}

function memoryOf(setup: StepSetup, info: DdpStepInfo): MemoryBreakdown {
  const t = setup.training;
  const mixed = t.precision === 'bf16' || t.precision === 'fp16';
  const activationBytes = activationBytesPerRank(
    setup.model,
    { microBatch: t.microBatch, seqLen: t.seqLen, tp: 1, sequenceParallel: false, recompute: 'none', flashAttention: t.flashAttention, bytesPerElement: mixed ? 2 : 4 },
    { layers: setup.model.arch === 'mlp' ? 0 : setup.model.layers, firstStage: true, lastStage: true },
  );
  return memoryPerGpu({
    model: setup.model,
    paramsPerRank: info.paramsPerRank,
    dp: setup.parallel.dp,
    zero: 0,
    precision: mixed ? 'mixed' : 'fp32',
    optimizer: t.optimizer,
    activationBytes,
    bucketBytes: setup.parallel.ddp.bucketMB * MiB,
    // PyTorch DDP's default gradient_as_bucket_view=False keeps a second, flat copy of the gradients.
    ddpBucketCopy: true,
  });
}

/** Simulates one data-parallel training step, event by event. */
export function simulateStep(setup: StepSetup): StepRun {
  const topology = buildTopology(setup.cluster);
  const info = compileDdpStep(setup);
  const sim = new Simulator();
  const net = new FlowNetwork(sim, topology.links.map((l) => l.bandwidthGBps));
  const collectives = new CollectiveService(topology, { mode: setup.comm.mode, allReduceAlgorithm: setup.comm.algorithm, protocol: setup.comm.protocol });
  const trace = new ProgramExecutor(info.program, sim, net, collectives).run();

  const gpus = setup.parallel.dp;
  const stepTimeS = trace.makespanNs / 1e9;
  const t = setup.training;
  const modelFlops = modelFlopsPerStep(setup.model, t.globalBatch, t.seqLen);
  const hardwareFlops = hardwareFlopsPerStep(setup.model, t.globalBatch, t.seqLen, 'none');
  const peak = setup.cluster.node.gpu.peakTflops[computeDtype(t.precision)] ?? NaN;
  const mean = meanBreakdown(rankBreakdowns(trace));
  const memory = memoryOf(setup, info);
  const capacityBytes = setup.cluster.node.gpu.memoryBytes;
  const largest = info.buckets.reduce((a, b) => (b.bytes > a.bytes ? b : a), info.buckets[0]);
  const choice = gpus > 1 && largest ? collectives.choose('all_reduce', info.program.tasks.find((x) => x.collective)!.collective!.group, largest.bytes) : undefined;
  const result: StepResult = {
    name: setup.name,
    seed: setup.seed,
    gpus,
    stepTimeS,
    samplesPerS: t.globalBatch / stepTimeS,
    tokensPerS: (t.globalBatch * t.seqLen) / stepTimeS,
    tflopsPerGpu: modelFlops / stepTimeS / gpus / 1e12,
    hardwareTflopsPerGpu: hardwareFlops / stepTimeS / gpus / 1e12,
    mfu: modelFlops / stepTimeS / gpus / 1e12 / peak,
    memory: {
      peakBytesPerGpu: memory.totalBytes,
      capacityBytes,
      fits: memory.totalBytes <= capacityBytes,
      shortfallBytes: Math.max(0, memory.totalBytes - capacityBytes),
      breakdown: memory,
    },
    breakdown: { computeS: mean.computeNs / 1e9, exposedCommS: mean.exposedCommNs / 1e9, idleS: mean.idleNs / 1e9, commS: mean.commNs / 1e9 },
    modelParams: info.paramsPerRank,
    microBatchesPerStep: info.microBatchesPerStep,
    buckets: { count: info.buckets.length, meanBytes: info.buckets.reduce((a, b) => a + b.bytes, 0) / Math.max(1, info.buckets.length) },
    gradientAllReduce: choice ? { algorithm: choice.algorithm, protocol: choice.protocol } : undefined,
    eventsFired: sim.eventsFired,
  };
  return { result, trace, info, topology };
}
