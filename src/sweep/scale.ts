import { applyOverrides, type RawScenario } from '../scenario/load.js';
import { resolveScenario, type Scenario } from '../scenario/resolve.js';
import { InvalidScenarioError } from '../scenario/errors.js';
import { ScenarioError } from '../sim/errors.js';
import { simulateStep, type StepRun } from '../sim/simulateStep.js';
import { withScaling, type ScaleRow } from './scaleMath.js';

/** Strong scaling keeps the global batch; weak scaling keeps the batch per data-parallel replica. */
export type ScaleMode = 'strong' | 'weak';

export interface ScaleOptions {
  mode: ScaleMode;
  /** `--set path=value` overrides applied before anything else. */
  sets?: readonly string[];
  /** Called after each GPU count, simulated or not. */
  onProgress?: (gpus: number) => void;
}

/** The sweep of one scenario. */
export interface ScaleSeries {
  name: string;
  source: string;
  mode: ScaleMode;
  /** Tensor- and pipeline-parallel sizes held fixed while dp grows. */
  tp: number;
  pp: number;
  rows: ScaleRow[];
  /** The largest size that was simulated, kept for the report's timeline and memory chart. */
  largest?: { gpus: number; scenario: Scenario; run: StepRun };
}

/** One line from a scenario error: an `InvalidScenarioError`'s problems joined, without the file name. */
function reasonOf(err: ScenarioError): string {
  if (err instanceof InvalidScenarioError) return err.problems.map((p) => (p.path ? `${p.path}: ${p.message}` : p.message)).join('; ');
  return err.message;
}

function positiveIntOr(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : fallback;
}

/**
 * Simulates a scenario at each GPU count. The scenario is changed at the raw level, as a user would edit
 * the file: `cluster.nodes` = GPUs / GPUs per node (below one node, a node with that many GPUs and at
 * most as many NICs), `parallel.dp` = GPUs / (tp × pp), and for weak scaling `training.globalBatch` =
 * the original batch per replica × dp. A size that cannot be built (not whole nodes, a batch that does
 * not divide, any scenario problem) becomes an infeasible row with its reason; one that does not fit in
 * memory is simulated and marked `oom`. Throws only if the scenario itself (at its own size) is invalid.
 */
export function scaleSweep(file: RawScenario, gpuCounts: readonly number[], options: ScaleOptions): ScaleSeries {
  const raw = applyOverrides(file.raw, options.sets ?? []) as Record<string, unknown>;
  const base = resolveScenario(raw, file.source, file.baseDir);
  const parallel = (raw.parallel ?? {}) as Record<string, unknown>;
  const tp = positiveIntOr(parallel.tp, 1);
  const pp = positiveIntOr(parallel.pp, 1);
  const perNode = base.cluster.node.gpusPerNode;
  const nics = base.cluster.node.nicsPerNode;
  const perReplicaBatch = base.training.globalBatch / base.parallel.dp;
  const microBatch = base.training.microBatch;
  const rows: ScaleRow[] = [];
  let largest: ScaleSeries['largest'];

  for (const gpus of gpuCounts) {
    const row = ((): ScaleRow => {
      if (gpus % (tp * pp) !== 0) return { gpus, status: 'infeasible', reason: `not divisible: ${gpus} GPUs do not split into tp × pp = ${tp} × ${pp} groups` };
      if (gpus > perNode && gpus % perNode !== 0) return { gpus, status: 'infeasible', reason: `not whole nodes: ${gpus} GPUs over nodes of ${perNode}` };
      const dp = gpus / (tp * pp);
      const nodes = Math.max(1, gpus / perNode);
      const globalBatch = options.mode === 'weak' ? perReplicaBatch * dp : base.training.globalBatch;
      if (globalBatch % (microBatch * dp) !== 0) {
        return { gpus, nodes, dp, globalBatch, status: 'infeasible', reason: `not divisible: global batch ${globalBatch} over microBatch × dp = ${microBatch} × ${dp}` };
      }
      const sets = [`cluster.nodes=${nodes}`, `parallel.dp=${dp}`, `training.globalBatch=${globalBatch}`];
      if (gpus < perNode) sets.push(`cluster.node.gpusPerNode=${gpus}`, `cluster.node.nicsPerNode=${Math.min(nics, gpus)}`);
      let scenario: Scenario;
      let run: StepRun;
      try {
        scenario = resolveScenario(applyOverrides(raw, sets), file.source, file.baseDir);
        run = simulateStep(scenario);
      } catch (err) {
        if (err instanceof ScenarioError) return { gpus, nodes, dp, globalBatch, status: 'infeasible', reason: reasonOf(err) };
        throw err;
      }
      const r = run.result;
      largest = { gpus, scenario, run };
      return {
        gpus,
        status: r.memory.fits ? 'ok' : 'oom',
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
        fits: r.memory.fits,
      };
    })();
    rows.push(row);
    options.onProgress?.(gpus);
  }
  return { name: base.name, source: file.source, mode: options.mode, tp, pp, rows: withScaling(rows), largest };
}
