import { applyOverrides, type RawScenario } from '../scenario/load.js';
import { setupKind } from '../accuracy/setupKind.js';
import { resolveClusterSection, resolveScenario, type Scenario } from '../scenario/resolve.js';
import { InvalidScenarioError } from '../scenario/errors.js';
import { ScenarioError } from '../sim/errors.js';
import { simulateStep, type StepRun } from '../sim/simulateStep.js';
import { isSimulated, movedScalingBase, withScaling, type ScaleRow } from './scaleMath.js';
import { commSettingsOf, pickCommSettings, type CommSettings } from './commSettings.js';

/** Strong scaling keeps the global batch; weak scaling keeps the batch per data-parallel replica. */
export type ScaleMode = 'strong' | 'weak';

export interface ScaleOptions {
  mode: ScaleMode;
  /** `--set path=value` overrides applied before anything else. */
  sets?: readonly string[];
  /** Called after each GPU count, simulated or not. */
  onProgress?: (gpus: number) => void;
}

/** The sweep of one scenario; with its communication settings where they apply (`CommSettings`). */
export interface ScaleSeries extends CommSettings {
  name: string;
  source: string;
  mode: ScaleMode;
  /** Tensor- and pipeline-parallel sizes held fixed while dp grows. */
  tp: number;
  pp: number;
  /** Context-parallel size, also fixed; absent: 1. */
  cp?: number;
  rows: ScaleRow[];
  /** Set when speedup and efficiency are against this size, not the smallest, because smaller ones were interrupted. */
  scalingBaseGpus?: number;
  /** The largest size that was simulated, kept for the report's timeline and memory chart. */
  largest?: { gpus: number; scenario: Scenario; run: StepRun };
}

/**
 * Everything needed to simulate one scenario at any GPU count: plain data (structured-clonable), so a
 * worker thread can take it once and then simulate points from a GPU count alone. Its `CommSettings` are the
 * reference scenario's, for the output: every point runs from `raw`, which holds them.
 */
export interface SeriesPlan extends CommSettings {
  name: string;
  /** The file's path as given. */
  source: string;
  /** Folder of the file, where relative paths inside the scenario start. */
  baseDir: string;
  mode: ScaleMode;
  /** The scenario as read, with `--set` applied. */
  raw: Record<string, unknown>;
  tp: number;
  pp: number;
  /** Context-parallel size, held fixed like tp and pp. */
  cp: number;
  gpusPerNode: number;
  nicsPerNode: number;
  /** The scenario's own global batch (sequences) and micro-batch. */
  globalBatch: number;
  microBatch: number;
  /** Sequences per data-parallel replica at the scenario's own size (kept in weak scaling). */
  perReplicaBatch: number;
  /**
   * The reference scenario's warnings (values it left to a default), for the user; none of them depends on the size.
   */
  warnings: string[];
}

/** One simulated (or refused) point; `scenario` and `run` only when it was simulated. */
export interface PointOutcome {
  row: ScaleRow;
  scenario?: Scenario;
  run?: StepRun;
}

/** One line from a scenario error: an `InvalidScenarioError`'s problems joined, without the file name. */
function reasonOf(err: ScenarioError): string {
  if (err instanceof InvalidScenarioError)
    return err.problems.map((p) => (p.path ? `${p.path}: ${p.message}` : p.message)).join('; ');
  return err.message;
}

function positiveIntOr(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : fallback;
}

/**
 * The scenario as the sweep's reference: at its own size, or, when that does not hold whole replicas of its split
 * (`--set parallel.cp=16` on a one-node file, `--set parallel.tp=4 --set parallel.pp=3` on 8-GPU nodes), at the fewest
 * nodes that do, with dp derived. Every point sets its own size anyway. When that fails too, the scenario's own
 * problems are what the user is told.
 */
function resolveReference(
  raw: Record<string, unknown>,
  file: RawScenario,
  parallel: Record<string, unknown>,
): Scenario {
  try {
    return resolveScenario(raw, file.source, file.baseDir);
  } catch (err) {
    if (!(err instanceof InvalidScenarioError)) throw err;
    const split = positiveIntOr(parallel.tp, 1) * positiveIntOr(parallel.cp, 1) * positiveIntOr(parallel.pp, 1);
    let perNode: number;
    try {
      perNode = resolveClusterSection(raw.cluster, file.source).node.gpusPerNode;
    } catch {
      throw err;
    }
    // The fewest whole nodes whose GPUs the split divides: lcm(split, GPUs per node) GPUs.
    const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
    const nodes = split / gcd(split, perNode);
    const { dp: _dp, ...rest } = parallel;
    try {
      return resolveScenario(
        { ...raw, cluster: { ...(raw.cluster as Record<string, unknown>), nodes }, parallel: rest },
        file.source,
        file.baseDir,
      );
    } catch {
      throw err;
    }
  }
}

/**
 * Reads what a sweep of this scenario holds fixed. Throws the scenario's `ScenarioError` if the scenario
 * itself (at its own size, or at the fewest nodes that hold one replica of its split, with the overrides) is invalid.
 */
export function planSeries(file: RawScenario, mode: ScaleMode, sets: readonly string[] = []): SeriesPlan {
  const raw = applyOverrides(file.raw, sets) as Record<string, unknown>;
  const parallel = (raw.parallel ?? {}) as Record<string, unknown>;
  const base = resolveReference(raw, file, parallel);
  return {
    name: base.name,
    source: file.source,
    baseDir: file.baseDir,
    mode,
    raw,
    tp: positiveIntOr(parallel.tp, 1),
    pp: positiveIntOr(parallel.pp, 1),
    cp: positiveIntOr(parallel.cp, 1),
    ...commSettingsOf(base),
    gpusPerNode: base.cluster.node.gpusPerNode,
    nicsPerNode: base.cluster.node.nicsPerNode,
    globalBatch: base.training.globalBatch,
    microBatch: base.training.microBatch,
    perReplicaBatch: base.training.globalBatch / base.parallel.dp,
    warnings: [...(base.warnings ?? []), ...spreadWarning(base)],
  };
}

/** A GPU speed spread slows every size by more the more GPUs it has: the efficiency then includes that loss. */
function spreadWarning(base: Scenario): string[] {
  const spread = base.noise.gpuSpeedSpread ?? 0;
  if (spread <= 0) return [];
  return [
    `noise.gpuSpeedSpread ${(100 * spread).toFixed(1)}%: each size runs at the expected slowest of its GPUs, ` +
      'so the efficiency includes the loss to slower GPUs, which grows with the GPU count',
  ];
}

/**
 * Simulates the scenario of `plan` at `gpus` GPUs. The scenario is changed at the raw level, as a user
 * would edit the file: `cluster.nodes` = GPUs / GPUs per node (below one node, a node with that many GPUs
 * and at most as many NICs), `parallel.dp` = GPUs / (tp × cp × pp), and for weak scaling
 * `training.globalBatch` = the original batch per replica × dp. A size that cannot be built (not whole
 * nodes, a batch that does not divide, any scenario problem) becomes an infeasible row with its reason;
 * one that does not fit in memory is simulated and marked `oom`. The row has no speedup or efficiency
 * yet: those need the whole series (`withScaling`). A pure function of (plan, gpus), so a point gives the
 * same row in any thread, process or machine.
 */
export function simulatePoint(plan: SeriesPlan, gpus: number): PointOutcome {
  const { tp, pp, gpusPerNode: perNode } = plan;
  const cp = plan.cp ?? 1;
  const group = tp * cp * pp;
  const groupText = cp > 1 ? `tp × cp × pp = ${tp} × ${cp} × ${pp}` : `tp × pp = ${tp} × ${pp}`;
  if (gpus % group !== 0)
    return {
      row: { gpus, status: 'infeasible', reason: `not divisible: ${gpus} GPUs do not split into ${groupText} groups` },
    };
  if (gpus > perNode && gpus % perNode !== 0)
    return { row: { gpus, status: 'infeasible', reason: `not whole nodes: ${gpus} GPUs over nodes of ${perNode}` } };
  const dp = gpus / group;
  const nodes = Math.max(1, gpus / perNode);
  const globalBatch = plan.mode === 'weak' ? plan.perReplicaBatch * dp : plan.globalBatch;
  const microBatch = fittingMicroBatch(globalBatch, dp, plan.microBatch);
  if (microBatch === undefined) {
    const why = globalBatch % dp !== 0 ? `${dp} replicas (dp)` : `microBatch × dp = ${plan.microBatch} × ${dp}`;
    return {
      row: {
        gpus,
        nodes,
        dp,
        globalBatch,
        status: 'infeasible',
        reason: `not divisible: global batch ${globalBatch} over ${why}`,
      },
    };
  }
  const sets = [`cluster.nodes=${nodes}`, `parallel.dp=${dp}`, `training.globalBatch=${globalBatch}`];
  if (microBatch !== plan.microBatch) sets.push(`training.microBatch=${microBatch}`);
  if (gpus < perNode)
    sets.push(`cluster.node.gpusPerNode=${gpus}`, `cluster.node.nicsPerNode=${Math.min(plan.nicsPerNode, gpus)}`);
  let scenario: Scenario;
  let run: StepRun;
  try {
    scenario = resolveScenario(applyOverrides(plan.raw, sets), plan.source, plan.baseDir);
    run = simulateStep(scenario);
  } catch (err) {
    if (err instanceof ScenarioError)
      return { row: { gpus, nodes, dp, globalBatch, status: 'infeasible', reason: reasonOf(err) } };
    throw err;
  }
  const r = run.result;
  const fits = r.memory.fits;
  const host = r.memory.host;
  const row: ScaleRow = {
    gpus,
    status: fits ? 'ok' : 'oom',
    nodes,
    dp,
    globalBatch,
    stepTimeS: r.stepTimeS,
    samplesPerS: r.samplesPerS,
    tokensPerS: r.tokensPerS,
    exposedCommShare: r.breakdown.exposedCommS / r.stepTimeS,
    mfu: r.mfu,
    memoryBytesPerGpu: r.memory.peakBytesPerGpu,
    capacityBytes: r.memory.capacityBytes,
    fits,
    kind: setupKind(scenario),
    ...(microBatch !== plan.microBatch ? { microBatch } : {}),
    // GPU memory that fits with host memory that does not: say which.
    ...(r.memory.gpuFits && host?.fits === false
      ? { reason: `host memory short by ${(host.shortfallBytes / 2 ** 30).toFixed(1)} GiB per node (CPU offload)` }
      : {}),
  };
  return { row, scenario, run };
}

/**
 * The micro-batch a size runs with: the scenario's, or, under strong scaling where more replicas leave each fewer
 * sequences than it, the largest micro-batch at most the scenario's that divides the sequences per replica (as a
 * user would lower `--micro-batch-size` to keep the global batch). Undefined when the replicas do not split the batch.
 */
export function fittingMicroBatch(globalBatch: number, dp: number, microBatch: number): number | undefined {
  if (globalBatch % dp !== 0) return undefined;
  const perReplica = globalBatch / dp;
  for (let m = Math.min(microBatch, perReplica); m >= 1; m--) if (perReplica % m === 0) return m;
  return undefined;
}

/** A series from its plan and its rows in GPU-count order (speedup and efficiency filled in here). */
export function assembleSeries(plan: SeriesPlan, rows: readonly ScaleRow[]): ScaleSeries {
  const base = movedScalingBase(rows);
  return {
    name: plan.name,
    source: plan.source,
    mode: plan.mode,
    tp: plan.tp,
    pp: plan.pp,
    ...(plan.cp > 1 ? { cp: plan.cp } : {}),
    ...pickCommSettings(plan),
    rows: withScaling(rows),
    ...(base !== undefined ? { scalingBaseGpus: base } : {}),
  };
}

/** The GPU count of the largest simulated row (`ok` or `oom`) of a series: the one the report draws. */
export function largestSimulatedGpus(rows: readonly ScaleRow[]): number | undefined {
  for (let i = rows.length - 1; i >= 0; i--) if (isSimulated(rows[i])) return rows[i].gpus;
  return undefined;
}

/**
 * Simulates a scenario at each GPU count, in this thread, one after another (the reference that
 * threaded and sharded sweeps must reproduce exactly). Keeps the largest simulated run for the report.
 * Throws only if the scenario itself (at its own size) is invalid.
 */
export function scaleSweep(file: RawScenario, gpuCounts: readonly number[], options: ScaleOptions): ScaleSeries {
  const plan = planSeries(file, options.mode, options.sets ?? []);
  const rows: ScaleRow[] = [];
  let largest: ScaleSeries['largest'];
  for (const gpus of gpuCounts) {
    const { row, scenario, run } = simulatePoint(plan, gpus);
    if (scenario && run) largest = { gpus, scenario, run };
    rows.push(row);
    options.onProgress?.(gpus);
  }
  return { ...assembleSeries(plan, rows), largest };
}
