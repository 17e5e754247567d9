import { boundOf } from '../sim/stats/bottleneck.js';
import { withProfile } from '../calibrate/applyProfile.js';
import type { ProfileSpec } from '../advise/evaluate.js';
import { setupKind, type SetupKind } from '../accuracy/setupKind.js';
import { ScenarioError } from '../sim/errors.js';
import { applyOverrides } from '../scenario/load.js';
import { resolveScenario, type Scenario } from '../scenario/resolve.js';
import { simulateStep, type StepResult } from '../sim/simulateStep.js';
import { compileStep } from '../sim/parallel/stepCompiler.js';
import { localBusy } from '../sim/program/streamBusy.js';
import type { Task } from '../sim/program/types.js';
import { CollectiveService } from '../sim/collectives/collectiveService.js';
import { buildTopology } from '../sim/network/topology.js';
import { expertRoutingConfig } from '../sim/workload/moe.js';
import { candidateSets, type KnobContext, type PlanCandidate } from './candidates.js';
import type { PlanLayout } from './layouts.js';
import { pruneLayout, type PruneOutcome } from './prune.js';
import type { PlanSpace } from './space.js';

/** Everything a plan's tasks need, plain data so that worker threads can be given it. */
export interface PlanJob {
  /** The scenario file's raw content with the imports applied. */
  raw: unknown;
  /** Overrides under every candidate's: the user's `--set` and the GPU count. */
  baseSets: string[];
  source: string;
  baseDir: string;
  profile?: ProfileSpec;
  ctx: KnobContext;
  space: PlanSpace;
  /** What the tasks are: layouts to prune, candidates to bound or estimate, or setups (as overrides) to simulate. */
  phase: 'prune' | 'bound' | 'estimate' | 'simulate';
  layouts: PlanLayout[];
  candidates: PlanCandidate[];
  setups: string[][];
}

/** The scenario of the job with `sets` on top (and the profile, if any); throws the scenario's error. */
export function resolveWith(job: PlanJob, sets: readonly string[]): Scenario {
  const resolved = resolveScenario(applyOverrides(job.raw, [...job.baseSets, ...sets]), job.source, job.baseDir);
  return job.profile ? withProfile(resolved, job.profile.profile, job.profile.path).scenario : resolved;
}

/** A candidate's estimated step time, or why it could not be simulated. */
export type Estimate =
  { stepTimeS: number; exact: false } | { stepTimeS: number; exact: true; sim: Simulated } | { error: string };

/** What a full simulation of a candidate gave. */
export interface Simulated {
  stepTimeS: number;
  tokensPerS: number;
  mfu: number;
  peakBytesPerGpu: number;
  capacityBytes: number;
  fits: boolean;
  breakdown: StepResult['breakdown'];
  /** What bounds the step (`boundOf`: compute where it is over half the step, else the largest loss). */
  bound: string;
  kind: SetupKind;
}

export type SimulateOutcome = Simulated | { error: string };

/**
 * The two micro-batch counts a step is simulated at to estimate it at `m`: a pipeline's steady state starts once
 * every stage has work (m ≥ pp), and from there each further micro-batch adds the same time (each further round of
 * pp, interleaved, whose micro-batches come in whole rounds), so two counts in the steady state give the rest by a
 * straight line; without a pipeline each micro-batch adds its passes to the same reduction and optimizer step.
 * Undefined when m is small enough to simulate as it is.
 */
export function estimatePoints(
  l: Pick<PlanLayout, 'pp' | 'microBatches' | 'schedule'>,
  allWarmupAtOneRound = false,
): { m1: number; m2: number } | undefined {
  // Megatron-DeepSpeed runs every forward first when m = pp (schedules.ts): another schedule than at more rounds.
  const rounds = l.schedule === 'interleaved' && allWarmupAtOneRound ? 2 : 1;
  const m1 = rounds * l.pp;
  const m2 = l.schedule === 'interleaved' ? m1 + l.pp : l.pp + 1;
  return l.microBatches > m2 ? { m1, m2 } : undefined;
}

function messageOf(err: unknown): string {
  if (err instanceof ScenarioError) return err.message.split('\n').slice(-1)[0].trim();
  throw err;
}

/** A candidate's overrides with the global batch that gives it `m` micro-batches a step. */
function atMicroBatches(c: PlanCandidate, ctx: KnobContext, m: number): string[] {
  return [...candidateSets(c, ctx), `training.globalBatch=${m * c.layout.microBatch * c.layout.dp}`];
}

/** Estimates candidate `i`: simulated at two small micro-batch counts and extended by a straight line. */
export function estimateCandidate(job: PlanJob, i: number): Estimate {
  const c = job.candidates[i];
  const sets = candidateSets(c, job.ctx);
  try {
    const points = estimatePoints(c.layout, job.ctx.interleavedAllWarmupAtOneRound);
    // Few enough micro-batches to simulate the step as it is: the estimate is the simulation, kept whole.
    if (!points) {
      const s = resolveWith(job, sets);
      const sim = simulatedOf(s, simulateStep(s).result);
      return { stepTimeS: sim.stepTimeS, exact: true, sim };
    }
    const stepAt = (m: number) => simulateStep(resolveWith(job, atMicroBatches(c, job.ctx, m))).result.stepTimeS;
    const t1 = stepAt(points.m1);
    const t2 = stepAt(points.m2);
    return {
      stepTimeS: t1 + ((c.layout.microBatches - points.m1) * (t2 - t1)) / (points.m2 - points.m1),
      exact: false,
    };
  } catch (err) {
    return { error: messageOf(err) };
  }
}

/**
 * Micro-batches the bound's program is compiled with: at least 3 (and whole rounds of pp, interleaved), so that one
 * micro-batch in the middle carries none of the once-a-step work the compiler ties to the first (Megatron's early
 * weight gathers) or the last (the gradient reductions) micro-batch; `localBusy` takes the least of them.
 */
export function boundMicroBatches(l: Pick<PlanLayout, 'pp' | 'schedule'>): number {
  return l.schedule === 'interleaved' ? l.pp * Math.ceil(3 / l.pp) : 3;
}

/**
 * A lower bound on candidate `i`'s step, s, without simulating it: the busiest stream of any rank (`localBusy`), from
 * the program compiled with `boundMicroBatches`, its least work of one micro-batch counted m times. With compute
 * jitter a micro-batch's kernels differ from draw to draw, so there is no bound (0). With a 1F1B pipeline a stage also
 * waits, before its first forward, for the first micro-batch's forwards on the stages before it, and after its last
 * backward the last micro-batch's backwards still run on them (`pipelineFillDrainNs`). Infinity when the candidate
 * cannot be compiled.
 */
export function boundCandidate(job: PlanJob, i: number): number {
  const c = job.candidates[i];
  const l = c.layout;
  const fewest = boundMicroBatches(l);
  try {
    const setup = resolveWith(job, atMicroBatches(c, job.ctx, fewest));
    if (setup.noise.computeJitter > 0) return 0;
    const plan = compileStep(setup);
    const busy = localBusy(plan.program, fewest, idleCollectiveNs(setup));
    const stageOf = (rank: number) => plan.layout.coords(rank).p;
    const fillDrain = l.pp > 1 && l.schedule === '1f1b' ? pipelineFillDrainNs(plan.program, stageOf, l.pp) : undefined;
    let most = 0;
    for (const [key, b] of busy) {
      const [rank, stream] = key.split('/');
      const work = b.fixedNs + l.microBatches * b.perMicroBatchNs;
      most = Math.max(most, work);
      if (fillDrain && stream === 'compute')
        most = Math.max(most, fillDrain[stageOf(Number(rank))] + l.microBatches * b.perMicroBatchNs);
    }
    return most / 1e9;
  } catch (err) {
    if (err instanceof ScenarioError) return Infinity;
    throw err;
  }
}

/**
 * Per stage s, the least time its compute stream must wait outside its own micro-batch work in a 1F1B step: the first
 * micro-batch's forward on each stage before s (least over that stage's ranks), and a micro-batch's backward (with
 * its recompute) on each of them, after s is done.
 */
function pipelineFillDrainNs(program: PlanJobProgram, stageOf: (rank: number) => number, pp: number): number[] {
  const forward = new Array<number>(pp).fill(Infinity);
  const backward = new Array<number>(pp).fill(Infinity);
  const perRank = new Map<number, { f: number; b: number }>();
  for (const t of program.tasks) {
    if (t.collective || t.stream !== 'compute' || t.microBatch !== 0 || t.ranks.length !== 1) continue;
    const sums = perRank.get(t.ranks[0]) ?? { f: 0, b: 0 };
    if (t.kind === 'forward') sums.f += t.durationNs;
    else if (t.kind === 'backward' || t.kind === 'recompute') sums.b += t.durationNs;
    perRank.set(t.ranks[0], sums);
  }
  for (const [rank, sums] of perRank) {
    const p = stageOf(rank);
    forward[p] = Math.min(forward[p], sums.f);
    backward[p] = Math.min(backward[p], sums.b);
  }
  const out: number[] = [];
  let before = 0;
  for (let p = 0; p < pp; p++) {
    out.push(before);
    before += (Number.isFinite(forward[p]) ? forward[p] : 0) + (Number.isFinite(backward[p]) ? backward[p] : 0);
  }
  return out;
}

type PlanJobProgram = ReturnType<typeof compileStep>['program'];

/**
 * Idle-network collective times per cluster (and collective settings), kept for the life of the thread: every candidate
 * of a plan shares them.
 */
const idleTimes = new Map<string, { service: CollectiveService; ns: Map<string, number> }>();

/**
 * The least time a collective of the step can take: its time on the idle network (sharing links only slows it), once
 * per distinct call. Undefined with measured collective tables, whose times the step takes instead.
 */
function idleCollectiveNs(setup: Scenario): ((t: Task) => number) | undefined {
  if ((setup.comm.measured?.length ?? 0) > 0) return undefined;
  const config = {
    mode: setup.comm.mode,
    allReduceAlgorithm: setup.comm.algorithm,
    protocol: setup.comm.protocol,
    ...expertRoutingConfig(setup),
  };
  const key = JSON.stringify([setup.cluster, config]);
  let entry = idleTimes.get(key);
  if (!entry)
    idleTimes.set(
      key,
      (entry = { service: new CollectiveService(buildTopology(setup.cluster), config), ns: new Map() }),
    );
  const { service, ns: cache } = entry;
  return (t) => {
    const c = t.collective!;
    const callKey = `${c.op}/${c.bytes}/${c.group.join(',')}`;
    let ns = cache.get(callKey);
    if (ns === undefined) cache.set(callKey, (ns = service.simulateIdleNs(c.op, c.group, c.bytes)));
    return ns;
  };
}

/** What a plan keeps of a simulated step. */
function simulatedOf(s: Scenario, r: StepResult): Simulated {
  return {
    stepTimeS: r.stepTimeS,
    tokensPerS: r.tokensPerS,
    mfu: r.mfu,
    peakBytesPerGpu: r.memory.peakBytesPerGpu,
    capacityBytes: r.memory.capacityBytes,
    fits: r.memory.fits,
    breakdown: r.breakdown,
    bound: boundOf(r.bottleneck),
    kind: setupKind(s),
  };
}

/** Simulates setup `i` (overrides on the job's scenario) as `simulate` would. */
export function simulateSetup(job: PlanJob, i: number): SimulateOutcome {
  try {
    const s = resolveWith(job, job.setups[i]);
    return simulatedOf(s, simulateStep(s).result);
  } catch (err) {
    return { error: messageOf(err) };
  }
}

/** Task `i` of the job's phase. */
export function planTask(job: PlanJob, i: number): PruneOutcome | number | Estimate | SimulateOutcome {
  if (job.phase === 'prune') return pruneLayout(job.layouts[i], job.space, job.ctx, (sets) => resolveWith(job, sets));
  if (job.phase === 'bound') return boundCandidate(job, i);
  return job.phase === 'estimate' ? estimateCandidate(job, i) : simulateSetup(job, i);
}
