import type { ProfileSpec } from '../advise/evaluate.js';
import { errorBandFor, type ErrorBand } from '../accuracy/errorBand.js';
import { pairSpread, type PairSpread } from '../accuracy/pairSpread.js';
import { storedResiduals } from '../accuracy/residualStore.js';
import type { Scenario } from '../scenario/resolve.js';
import { compiledWorker, runTasks } from '../threads/taskPool.js';
import { candidateSets, changedSets, knobContext, scenarioCandidate, type PlanCandidate } from './candidates.js';
import { planTask, type Estimate, type PlanJob, type Simulated, type SimulateOutcome } from './evaluate.js';
import { planLayouts, type LayoutRule } from './layouts.js';
import { shardOf, type Shard } from '../sweep/grid.js';
import { addPruneOutcome, type MemoryRule, type PruneOutcome } from './prune.js';
import type { PlanSpace } from './space.js';

/** How many of the best estimates are simulated in full by default. */
export const DEFAULT_TOP = 5;

export interface PlanInput {
  raw: unknown;
  source: string;
  baseDir: string;
  /** The scenario at its own size (imports and `--set` applied): what the space and the knobs follow from. */
  scenario: Scenario;
  /** The user's `--set`. */
  sets: string[];
  gpus: number;
  space: PlanSpace;
  top: number;
  profile?: ProfileSpec;
  /** Plan only part `index` of `count` of the layouts (round-robin); the parts' rows merge into the whole answer. */
  shard?: Shard;
}

export interface PlanProgress {
  phase: PlanJob['phase'];
  done: number;
  total: number;
}

/** An estimated candidate. */
export interface PlanPoint {
  candidate: PlanCandidate;
  estimateS: number;
  peakBytesPerGpu: number;
}

/** One simulated candidate of the answer. */
export interface PlanRow {
  candidate: PlanCandidate;
  /** Every searched field, and those of them that differ from the scenario (what to type). */
  sets: string[];
  changed: string[];
  estimateS: number;
  sim: Simulated;
  band?: ErrorBand;
  /** Within the validated pair spread of the winner: the order of the two is not to be trusted. */
  tie: boolean;
  /** It is the scenario's own setup. */
  own: boolean;
}

export interface PlanResult {
  gpus: number;
  /** Ctrl-C stopped the search: the counts and the ranking cover what was done before it. */
  interrupted: boolean;
  /** Layouts of the space that tile the GPUs, and those left out before counting memory, by rule. */
  layouts: number;
  layoutsRemoved: Partial<Record<LayoutRule, number>>;
  /** Candidates (layouts × knobs) whose memory was counted or that a rule removed, and what removed them. */
  candidates: number;
  memoryRemoved: Partial<Record<MemoryRule, number>>;
  refused: PruneOutcome['refused'];
  /**
   * Candidates that fit; of them those estimated, those left out because their bound exceeds the best estimates, and
   * those that failed.
   */
  fitting: number;
  estimated: number;
  bounded: number;
  estimateErrors: number;
  /** The best `top` by estimate, simulated in full, best first; the winner is the first. */
  rows: PlanRow[];
  /** The scenario's own setup at this GPU count, simulated, when the space holds it and it fits. */
  own?: PlanRow;
  /** Every estimated candidate: its estimate and the memory of its fullest GPU (for the chart of the report). */
  points: PlanPoint[];
  /** The largest |estimate / simulation − 1| over the simulated rows, %. */
  estimateErrorPct: number;
  spread?: PairSpread;
}

/** The overrides that give the scenario `gpus` GPUs: whole nodes, or one node with fewer GPUs (and NICs). */
export function gpuSets(s: Scenario, gpus: number): string[] {
  const perNode = s.cluster.node.gpusPerNode;
  if (gpus < perNode)
    return [
      'cluster.nodes=1',
      `cluster.node.gpusPerNode=${gpus}`,
      `cluster.node.nicsPerNode=${Math.min(s.cluster.node.nicsPerNode, gpus)}`,
    ];
  return [`cluster.nodes=${gpus / perNode}`];
}

/** The same layout and knobs, field by field. */
function sameCandidate(a: PlanCandidate, b: PlanCandidate): boolean {
  const same = <T extends object>(x: T, y: T) =>
    (Object.keys(x) as (keyof T)[]).every((k) => x[k] === y[k]) && Object.keys(x).length === Object.keys(y).length;
  return same(a.layout, b.layout) && same(a.knobs, b.knobs);
}

/**
 * The scenario's own setup is one a candidate can be: no GPipe, no uneven layer counts, both or neither split counted.
 */
function ownIsCandidate(s: Scenario): boolean {
  const p = s.parallel;
  return (
    (p.pp === 1 || p.schedule !== 'gpipe') &&
    p.layersPerStage === undefined &&
    (p.accountForEmbeddingInSplit ?? false) === (p.accountForLossInSplit ?? false)
  );
}

/** How a plan runs: threads, progress, and the signal that stops it (Ctrl-C) with what it has. */
export interface SearchOptions {
  jobs: number;
  onProgress?: (p: PlanProgress) => void;
  signal?: AbortSignal;
}

/** Runs the tasks `count` (or these ids) of the job's phase; a task the signal kept from starting has no result. */
async function runPhase<R>(
  job: PlanJob,
  count: number | readonly number[],
  jobs: number,
  onProgress?: (p: PlanProgress) => void,
  signal?: AbortSignal,
): Promise<(R | undefined)[]> {
  let done = 0;
  const ids = typeof count === 'number' ? Array.from({ length: count }, (_, i) => i) : count;
  const { results } = await runTasks<PlanJob, ReturnType<typeof planTask>>({
    jobs,
    worker: compiledWorker(new URL('./planWorker.js', import.meta.url)),
    job,
    ids,
    runHere: (i) => planTask(job, i),
    onResult: () => onProgress?.({ phase: job.phase, done: ++done, total: ids.length }),
    ...(signal ? { signal } : {}),
  });
  return results as (R | undefined)[];
}

const byTime = (a: { t: number; i: number }, b: { t: number; i: number }) => a.t - b.t || a.i - b.i;

/**
 * The best `top` of simulated rows, by the full simulation's step (the earlier row first on equal steps), each after
 * the first marked a tie when it is within the validated pair spread of it.
 */
export function rankRows(rows: readonly PlanRow[], spread: PairSpread | undefined, top = rows.length): PlanRow[] {
  const ranked = rows
    .map((r, i) => ({ t: r.sim.stepTimeS, i }))
    .sort(byTime)
    .slice(0, top)
    .map(({ i }) => ({ ...rows[i], tie: false }));
  if (ranked.length > 0 && spread)
    for (const r of ranked.slice(1))
      r.tie = (100 * (r.sim.stepTimeS - ranked[0].sim.stepTimeS)) / ranked[0].sim.stepTimeS < spread.pct;
  return ranked;
}

/** The largest |estimate / simulation − 1| over the rows, %. */
export function estimateErrorPct(rows: readonly PlanRow[]): number {
  return Math.max(0, ...rows.map((r) => Math.abs(100 * (r.estimateS / r.sim.stepTimeS - 1))));
}

/** The sum of counts by name. */
const total = (counts: Partial<Record<string, number>>) =>
  Object.values(counts).reduce((a: number, n) => a + (n ?? 0), 0);

/**
 * Candidates estimated side by side before the bound is checked again: fixed, so that the answer does not depend on the
 * threads.
 */
export const ESTIMATE_BATCH = 8;

/**
 * Estimates the candidates in the order of their lower bounds (`boundCandidate`), a batch at a time, until the next
 * bound exceeds the `top`-th best estimate: no candidate left can then be among the best `top`, so these are the best
 * `top` of all (branch and bound). `estimates[i]` is undefined for a candidate left out.
 */
async function estimateBest(
  job: PlanJob,
  kept: PlanCandidate[],
  top: number,
  opts: SearchOptions,
): Promise<{ estimates: (Estimate | undefined)[]; bounded: number }> {
  const bounds = await runPhase<number>(
    { ...job, phase: 'bound', candidates: kept },
    kept.length,
    opts.jobs,
    opts.onProgress,
    opts.signal,
  );
  // Candidates the signal kept from being bounded are left out (the plan says it was interrupted).
  const order = bounds.flatMap((b, i) => (b === undefined ? [] : [{ t: b, i }])).sort(byTime);
  const estimates: (Estimate | undefined)[] = new Array(kept.length).fill(undefined);
  const best: number[] = [];
  const finite = order.filter((o) => o.t !== Infinity).length;
  let next = 0;
  let done = 0;
  const onProgress =
    opts.onProgress && ((p: PlanProgress) => opts.onProgress!({ ...p, done: done + p.done, total: finite }));
  while (next < order.length && !opts.signal?.aborted) {
    const cutoff = best.length >= top ? best[top - 1] : Infinity;
    if (order[next].t > cutoff || order[next].t === Infinity) break;
    const ids = order.slice(next, next + ESTIMATE_BATCH).map((o) => o.i);
    next += ids.length;
    const results = await runPhase<Estimate>(
      { ...job, phase: 'estimate', candidates: kept },
      ids,
      opts.jobs,
      onProgress,
      opts.signal,
    );
    done += ids.length;
    for (const id of ids) {
      const r = results[id];
      // No step is shorter than its bound: an extrapolation below it is raised to it (a whole simulation is kept).
      const e = r && 'stepTimeS' in r && !r.exact ? { ...r, stepTimeS: Math.max(r.stepTimeS, bounds[id] ?? 0) } : r;
      estimates[id] = e;
      if (e && 'stepTimeS' in e) best.push(e.stepTimeS);
    }
    best.sort((a, b) => a - b);
  }
  // A candidate that does not compile has no bound: it is one that could not be simulated.
  for (const o of order.slice(finite)) estimates[o.i] = { error: 'could not be compiled' };
  return { estimates, bounded: opts.signal?.aborted ? 0 : finite - Math.min(next, finite) };
}

/**
 * Plans the job on `gpus` GPUs: lists the layouts of the space, prunes their knobs by memory, estimates every
 * survivor's step from two short simulations, simulates the best `top` in full and ranks them by that. Deterministic:
 * the same input gives the same answer on any number of threads.
 */
export async function planSearch(input: PlanInput, opts: SearchOptions): Promise<PlanResult> {
  const ctx = knobContext(input.scenario);
  const baseSets = [...input.sets, ...gpuSets(input.scenario, input.gpus)];
  const job: PlanJob = {
    raw: input.raw,
    baseSets,
    source: input.source,
    baseDir: input.baseDir,
    profile: input.profile,
    ctx,
    space: input.space,
    phase: 'prune',
    layouts: [],
    candidates: [],
    setups: [],
  };
  const all = planLayouts(input.scenario, input.space, input.gpus);
  const shard = input.shard;
  // A part takes every count-th layout; the first part alone counts those left out before memory and runs the
  // scenario's own setup, so that the parts add up to the whole.
  const layouts = shard ? all.layouts.filter((_, i) => shardOf(i, shard.count) === shard.index) : all.layouts;
  const removed = !shard || shard.index === 1 ? all.removed : new Map<LayoutRule, number>();
  job.layouts = layouts;
  const pruned: PruneOutcome = { kept: [], keptBytes: [], removed: {}, refused: {} };
  for (const part of await runPhase<PruneOutcome>(job, layouts.length, opts.jobs, opts.onProgress, opts.signal))
    if (part) addPruneOutcome(pruned, part);
  const candidates =
    pruned.kept.length + total(pruned.removed) + Object.values(pruned.refused).reduce((a, r) => a + r.count, 0);

  const { estimates, bounded } = await estimateBest(job, pruned.kept, input.top, opts);
  const ranked = estimates.flatMap((e, i) => (e && 'stepTimeS' in e ? [{ t: e.stepTimeS, i }] : [])).sort(byTime);
  const best = ranked.slice(0, input.top);

  const ownHere = ownSetup(input.scenario, input.gpus);
  const own = !shard || shard.index === 1 ? ownHere : undefined;
  // An estimate that was the step simulated as it is needs no second simulation.
  const exactSim = (i: number): Simulated | undefined => {
    const e = estimates[i];
    return e && 'sim' in e ? e.sim : undefined;
  };
  const toSimulate = best.filter((b) => !exactSim(b.i));
  const setups = [...toSimulate.map((b) => candidateSets(pruned.kept[b.i], ctx)), ...(own ? [own.sets] : [])];
  const simulateJob: PlanJob = { ...job, phase: 'simulate', layouts: [], candidates: [], setups };
  // The best found are simulated even after an interruption: what was estimated is not lost (Ctrl-C again quits).
  const ran = await runPhase<SimulateOutcome>(simulateJob, setups.length, opts.jobs, opts.onProgress);
  const simOf = new Map(toSimulate.map((b, k) => [b.i, ran[k]]));
  const sims = best.map((b) => exactSim(b.i) ?? simOf.get(b.i));
  const ownSim = own ? ran[toSimulate.length] : undefined;
  const ownSets = candidateSets(scenarioCandidate(input.scenario), ctx);
  // The own setup at the plan's GPU count (its dp and micro-batches as they are there), when a candidate can be it.
  const ownAsCandidate = ownHere && ownIsCandidate(input.scenario) ? ownHere.candidate : undefined;
  const residuals = storedResiduals();
  const spread = pairSpread(residuals);
  const rowOf = (candidate: PlanCandidate, estimateS: number, sim: Simulated): PlanRow => {
    const sets = candidateSets(candidate, ctx);
    return {
      candidate,
      sets,
      changed: changedSets(sets, ownSets),
      estimateS,
      sim,
      band: errorBandFor(sim.kind, residuals),
      tie: false,
      own: ownAsCandidate !== undefined && sameCandidate(candidate, ownAsCandidate),
    };
  };
  const simulated = best.flatMap((b, k) =>
    sims[k] && 'stepTimeS' in sims[k] ? [rowOf(pruned.kept[b.i], b.t, sims[k] as Simulated)] : [],
  );
  const rows = rankRows(simulated, spread);
  return {
    gpus: input.gpus,
    interrupted: opts.signal?.aborted === true,
    layouts: layouts.length + total(Object.fromEntries(removed)),
    layoutsRemoved: Object.fromEntries(removed),
    candidates,
    memoryRemoved: pruned.removed,
    refused: pruned.refused,
    fitting: pruned.kept.length,
    estimated: estimates.filter((e) => e !== undefined).length,
    bounded,
    estimateErrors: estimates.filter((e) => e !== undefined && 'error' in e).length,
    rows,
    points: estimates.flatMap((e, i) =>
      e && 'stepTimeS' in e
        ? [{ candidate: pruned.kept[i], estimateS: e.stepTimeS, peakBytesPerGpu: pruned.keptBytes[i] }]
        : [],
    ),
    ...ownOf(own, rows, ownSim, rowOf),
    estimateErrorPct: estimateErrorPct(rows),
    ...(spread ? { spread } : {}),
  };
}

/**
 * The scenario's own setup at the plan's GPU count, as overrides: only dp changes (its split, schedule and the rest
 * stay as the file has them, uneven layer counts included). Undefined when its split does not tile the GPUs or the
 * batch does not divide.
 */
function ownSetup(s: Scenario, gpus: number): { sets: string[]; candidate: PlanCandidate } | undefined {
  const own = scenarioCandidate(s);
  const group = own.layout.tp * own.layout.cp * own.layout.pp;
  if (gpus % group !== 0) return undefined;
  const dp = gpus / group;
  const microBatches = s.training.globalBatch / (own.layout.microBatch * dp);
  if (!Number.isInteger(microBatches)) return undefined;
  return { sets: [`parallel.dp=${dp}`], candidate: { ...own, layout: { ...own.layout, dp, microBatches } } };
}

/**
 * The own row: the simulated row of the same candidate when there is one, else its own simulation (if it ran and fits).
 */
function ownOf(
  own: ReturnType<typeof ownSetup>,
  rows: readonly PlanRow[],
  sim: SimulateOutcome | undefined,
  rowOf: (c: PlanCandidate, estimateS: number, sim: Simulated) => PlanRow,
): { own?: PlanRow } {
  const found = rows.find((r) => r.own);
  if (found) return { own: found };
  if (!own || !sim || !('stepTimeS' in sim)) return {};
  return { own: { ...rowOf(own.candidate, sim.stepTimeS, sim), sets: own.sets, changed: [], own: true } };
}
