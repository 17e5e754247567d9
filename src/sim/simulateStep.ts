import { ScenarioError } from './errors.js';
import { Simulator } from './engine/simulator.js';
import { buildTopology } from './network/topology.js';
import { FlowNetwork } from './network/flowNetwork.js';
import { CollectiveService } from './collectives/collectiveService.js';
import { IdleOverlap, ProgramExecutor } from './program/executor.js';
import type { Trace } from './program/trace.js';
import { compileStep } from './parallel/stepCompiler.js';
import { precisionInfo } from './parallel/stepContext.js';
import type { StepPlan } from './parallel/stepTypes.js';
import { meanBreakdown, rankBreakdowns } from './stats/breakdown.js';
import { exposureByTraffic } from './stats/exposure.js';
import { diagnose, type Bottleneck } from './stats/bottleneck.js';
import { stageBalance, type StageBalance } from './stats/stageBalance.js';
import type { MemoryBreakdown } from './memory/memory.js';
import { hostMemoryPerNode, type HostMemory } from './memory/hostMemory.js';
import { stageMemories, type StageMemory } from './memory/stageMemory.js';
import { modelFlopsPerStep, hardwareFlopsPerStep } from './workload/flops.js';
import { stepNotes } from './stepNotes.js';
import { parameterCount, pipelineLayerCount } from './workload/model.js';
import { expertRoutingConfig } from './workload/moe.js';
import { attentionSummary, type AttentionSummary } from './workload/attentionKernels.js';
import type { StepSetup } from './setup.js';
import { gpuSpeedFactors, symmetricStageFactors } from './parallel/gpuSpeed.js';
import type { OptimizerStateTypes } from './memory/optimizerState.js';
import type { Topology } from './network/types.js';
import { shortcutsWith, type ShortcutFallbacks, type Shortcuts } from './shortcuts.js';

export type { StageMemory } from './memory/stageMemory.js';

/** The result of simulating one training step; `--json` prints it. */
export interface StepResult {
  name: string;
  seed: number;
  gpus: number;
  parallel: {
    tp: number;
    pp: number;
    dp: number;
    cp: number;
    cpCommType?: string;
    /** Expert-parallel size, present only when above 1. */
    ep?: number;
    /** Expert tensor-parallel size, present only when the scenario gives one other than tp. */
    etp?: number;
    /** The expert dispatcher, present only when it is not the all-to-all. */
    dispatcher?: string;
    schedule: string;
    virtualStages: number;
    zero: number;
    offload: string;
    recompute: string;
    sequenceParallel: boolean;
    tpCommOverlap?: boolean;
    tpCommOverlapSms?: { proj: number; fc2: number; bulk: number };
    fp32Gradients: boolean;
    fp32Reduction?: boolean;
    zeroStage1?: 'deepspeed' | 'megatron';
    overlapParamGather?: boolean;
  };
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
    /** The fullest rank's total (the stage that decides whether the job fits). */
    peakBytesPerGpu: number;
    capacityBytes: number;
    /** The job fits: every GPU, and with CPU offload every node's host memory (`gpuFits` and `host.fits`). */
    fits: boolean;
    /** Every GPU holds its share (the host's memory aside). */
    gpuFits: boolean;
    /** How much is missing on the fullest rank when it does not fit (0 when it fits). */
    shortfallBytes: number;
    /** Breakdown of the fullest rank. */
    breakdown: MemoryBreakdown;
    /** The optimizer state's types when any is not fp32 (`training.optimizerState`); absent: all fp32. */
    optimizerState?: OptimizerStateTypes;
    perStage: StageMemory[];
    /** With optimizer offload: the fullest node's host memory against the node's (`hostMemoryPerNode`). */
    host?: HostMemory;
  };
  /**
   * Mean over ranks; computeS + exposedCommS + bubbleS + hostOptimizerS + idleS = stepTimeS. `hostOptimizerS` is the
   * optimizer step on the host (CPU offload) while the GPU neither computes nor communicates. `bubbleS` is idle time
   * between a rank's first and last forward/backward work when there is a pipeline (0 otherwise).
   */
  breakdown: {
    computeS: number;
    exposedCommS: number;
    bubbleS: number;
    hostOptimizerS: number;
    idleS: number;
    commS: number;
  };
  modelParams: number;
  microBatchesPerStep: number;
  buckets: { count: number; meanBytes: number };
  /** How the DP gradient all-reduce was carried out (algorithm/protocol of the largest bucket). */
  gradientAllReduce?: { algorithm: string; protocol: string };
  eventsFired: number;
  /** How often the speed shortcuts fell back to the plain path (shortcuts.ts). */
  shortcuts: ShortcutFallbacks;
  /** With `noise.gpuSpeedSpread`: σ and the slowest GPU's compute factor (`gpuSpeedFactors`). */
  gpuSpeed?: { spread: number; slowestFactor: number };
  /** The fused attention kernel and its efficiency; absent unfused (`training.flashAttention: false`). */
  attention?: AttentionSummary;
  /** Things the user should know about how the split lands on the hardware. */
  notes: string[];
  /** What bounds the step, and exposed communication by traffic and wire. */
  bottleneck: Bottleneck;
  /** With a pipeline: each stage's compute and layers, the idle their imbalance forces, and a split that evens them. */
  stageBalance?: StageBalance;
}

/**
 * With a GPU speed spread: σ and the factor the slowest GPU's compute took (symmetric mode: the expected one of a
 * pipeline stage's GPUs; full fidelity: the largest drawn).
 */
function gpuSpeedSummary(setup: StepSetup, world: number): { gpuSpeed?: { spread: number; slowestFactor: number } } {
  const spread = setup.noise.gpuSpeedSpread ?? 0;
  if (spread <= 0) return {};
  const factorOf = gpuSpeedFactors(setup, world);
  const factors =
    setup.fidelity === 'full'
      ? Array.from({ length: world }, (_, r) => factorOf(r))
      : symmetricStageFactors(setup, world);
  return { gpuSpeed: { spread, slowestFactor: factors.reduce((a, b) => Math.max(a, b), 0) } };
}

/** What a step simulation leaves behind for reports. */
export interface StepRun {
  result: StepResult;
  trace: Trace;
  plan: StepPlan;
  topology: Topology;
}

/**
 * Runs the program with the shortcuts `shortcuts` allows (shortcuts.ts); a collective whose links no other flow can
 * cross while it runs takes its idle-network time as one event (exact, and most of the flows of a tensor-parallel
 * run). Should a flow ever meet such a call, the step is simulated again with flows throughout (counted).
 */
function execute(
  plan: StepPlan,
  topology: Topology,
  collectives: CollectiveService,
  shortcuts: Shortcuts,
  onProgress?: (p: StepProgress) => void,
): { trace: Trace; sim: Simulator; fallbacks: ShortcutFallbacks } {
  const tries = shortcuts.idleWindows ? [true, false] : [false];
  for (let i = 0; i < tries.length; i++) {
    const sim = new Simulator();
    const net = new FlowNetwork(
      sim,
      topology.links.map((l) => l.bandwidthGBps),
      { incrementalRates: shortcuts.incrementalRates },
    );
    try {
      const executor = new ProgramExecutor(plan.program, sim, net, collectives, {
        idleWindows: tries[i],
        shadowPruning: shortcuts.shadowPruning,
      });
      const tasks = plan.program.tasks.length;
      if (onProgress) sim.onProgress = () => onProgress({ tasksDone: executor.tasksDone, tasks, simulatedNs: sim.now });
      const trace = executor.run();
      return {
        trace,
        sim,
        fallbacks: { idleWindowReruns: i, rateSolves: net.solveCount, fullRateSolves: net.fullSolveCount },
      };
    } catch (err) {
      if (!(err instanceof IdleOverlap)) throw err;
    }
  }
  throw new Error('unreachable: the run without idle-time collectives cannot overlap');
}

/** How to run a step: `onProgress` every few thousand events; `shortcuts` to turn speed shortcuts off (all on). */
export interface StepRunOptions {
  onProgress?: (p: StepProgress) => void;
  shortcuts?: Partial<Shortcuts>;
}

/** How far a step's simulation has come: tasks of the program finished, and the simulated time reached. */
export interface StepProgress {
  tasksDone: number;
  tasks: number;
  simulatedNs: number;
}

/**
 * Simulates one training step, event by event. `onProgress` is called every few thousand events (a long run shows
 * progress with it); should the run start over without idle-time collectives, the count starts over too.
 */
/* eslint-disable-next-line max-lines-per-function -- assembles the StepResult from every statistic; debt: to split
   by section */
export function simulateStep(setup: StepSetup, options: StepRunOptions = {}): StepRun {
  const topology = buildTopology(setup.cluster);
  const plan = compileStep(setup);
  const shortcuts = shortcutsWith(options.shortcuts);
  const collectives = new CollectiveService(topology, {
    mode: setup.comm.mode,
    allReduceAlgorithm: setup.comm.algorithm,
    protocol: setup.comm.protocol,
    measured: setup.comm.measured,
    skipRepeats: shortcuts.repeatSkipping,
    ...expertRoutingConfig(setup),
  });
  const { trace, sim, fallbacks } = execute(plan, topology, collectives, shortcuts, options.onProgress);

  const par = setup.parallel;
  const gpus = plan.layout.world;
  const stepTimeS = trace.makespanNs / 1e9;
  // Every input is range-checked, so this is a last guard: a result that is not a number is never printed as one.
  if (!Number.isFinite(stepTimeS)) {
    throw new ScenarioError(
      '',
      `the simulated step time came out as ${stepTimeS} s, not a finite number: a hardware or profile value is out ` +
        `of any real range (a rate near 0, a latency near infinity); check the cluster's fields and the profile`,
    );
  }
  const t = setup.training;
  const modelFlops = modelFlopsPerStep(setup.model, t.globalBatch, t.seqLen);
  const hardwareFlops = hardwareFlopsPerStep(setup.model, t.globalBatch, t.seqLen, par.recompute);
  const peak = setup.cluster.node.gpu.peakTflops[precisionInfo(t.precision).gemmDtype] ?? NaN;
  const breakdowns = rankBreakdowns(trace);
  const mean = meanBreakdown(breakdowns);
  const bubbleNs = par.pp > 1 ? mean.windowIdleNs : 0;
  const perStage = stageMemories(setup);
  const fullest = perStage.reduce((a, b) => (b.totalBytes > a.totalBytes ? b : a), perStage[0]);
  const capacityBytes = setup.cluster.node.gpu.memoryBytes;
  const buckets = plan.stages.flatMap((s) => s.gradients.buckets);
  const largest = buckets.reduce((a, b) => (b.bytes > a.bytes ? b : a), buckets[0]);
  const dpGroup = plan.layout.dpGroup(0, 0);
  const choice =
    plan.layout.dp > 1 && largest
      ? collectives.choose(par.zero === 0 ? 'all_reduce' : 'reduce_scatter', dpGroup, largest.bytes)
      : undefined;
  const {
    stage: _s,
    fits: _f,
    layers: _l,
    paramsPerRank: _p,
    paramsHeldPerGpu: _ph,
    passesInFlight: _i,
    shortfallBytes: _b,
    hostBytes: _h,
    ...breakdown
  } = fullest;
  const host = hostMemoryPerNode(setup, perStage);
  const tflopsPerGpu = modelFlops / stepTimeS / gpus / 1e12;
  const core: Omit<StepResult, 'bottleneck' | 'stageBalance'> = {
    name: setup.name,
    seed: setup.seed,
    gpus,
    parallel: {
      tp: par.tp,
      pp: par.pp,
      dp: par.dp,
      cp: par.cp ?? 1,
      ...((par.cp ?? 1) > 1 ? { cpCommType: par.cpCommType ?? 'p2p' } : {}),
      ...((par.ep ?? 1) > 1 ? { ep: par.ep } : {}),
      ...(par.etp !== undefined && par.etp !== par.tp ? { etp: par.etp } : {}),
      ...(par.dispatcher === 'deepep' ? { dispatcher: par.dispatcher } : {}),
      schedule: par.schedule,
      virtualStages: par.virtualStages,
      zero: par.zero,
      offload: par.offload,
      recompute: par.recompute,
      sequenceParallel: par.sequenceParallel,
      ...(par.tpCommOverlap ? { tpCommOverlap: true, tpCommOverlapSms: { ...par.tpCommOverlap } } : {}),
      fp32Gradients: par.fp32Gradients ?? false,
      ...(par.fp32Reduction ? { fp32Reduction: true } : {}),
      ...(par.zero === 1 && par.zeroConfig.stage1 ? { zeroStage1: par.zeroConfig.stage1 } : {}),
      ...(par.overlapParamGather ? { overlapParamGather: true } : {}),
    },
    stepTimeS,
    samplesPerS: t.globalBatch / stepTimeS,
    tokensPerS: (t.globalBatch * t.seqLen) / stepTimeS,
    tflopsPerGpu,
    hardwareTflopsPerGpu: hardwareFlops / stepTimeS / gpus / 1e12,
    mfu: tflopsPerGpu / peak,
    memory: {
      peakBytesPerGpu: fullest.totalBytes,
      capacityBytes,
      fits: fullest.totalBytes <= capacityBytes && host?.fits !== false,
      gpuFits: fullest.totalBytes <= capacityBytes,
      shortfallBytes: Math.max(0, fullest.totalBytes - capacityBytes),
      breakdown,
      ...(t.optimizerState ? { optimizerState: { ...t.optimizerState } } : {}),
      perStage,
      host,
    },
    breakdown: {
      computeS: mean.computeNs / 1e9,
      exposedCommS: mean.exposedCommNs / 1e9,
      bubbleS: bubbleNs / 1e9,
      hostOptimizerS: mean.hostOptimizerNs / 1e9,
      idleS: (mean.idleNs - bubbleNs) / 1e9,
      commS: mean.commNs / 1e9,
    },
    modelParams: parameterCount(setup.model),
    microBatchesPerStep: plan.microBatchesPerStep,
    buckets: {
      count: buckets.length,
      meanBytes: buckets.reduce((a, b) => a + b.bytes, 0) / Math.max(1, buckets.length),
    },
    gradientAllReduce: choice ? { algorithm: choice.algorithm, protocol: choice.protocol } : undefined,
    eventsFired: sim.eventsFired,
    shortcuts: fallbacks,
    ...(t.flashAttention && setup.model.arch !== 'mlp'
      ? { attention: attentionSummary(setup.cluster.node.gpu, t.attentionKernel) }
      : {}),
    ...gpuSpeedSummary(setup, gpus),
    // A calibrated CPU's peak is its own measured ceiling: published GPU runs say nothing of its MFU.
    notes: stepNotes(setup, tflopsPerGpu / peak),
  };
  const balance = stageBalance(plan, breakdowns, stepTimeS, pipelineLayerCount(setup.model));
  const bottleneck = diagnose(
    {
      ...core.breakdown,
      stepTimeS,
      fits: core.memory.gpuFits,
      shortfallBytes: core.memory.shortfallBytes,
      capacityBytes,
      host: core.memory.host,
      stages: balance,
    },
    exposureByTraffic(trace, topology),
  );
  const result: StepResult = { ...core, bottleneck, ...(balance ? { stageBalance: balance } : {}) };
  return { result, trace, plan, topology };
}
