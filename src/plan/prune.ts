import { ScenarioError } from '../sim/errors.js';
import { InvalidScenarioError } from '../scenario/errors.js';
import type { Scenario } from '../scenario/resolve.js';
import { hostMemoryPerNode } from '../sim/memory/hostMemory.js';
import { stageMemories } from '../sim/memory/stageMemory.js';
import {
  candidateSets,
  offloadsOf,
  sequenceParallelOf,
  tpCommOverlapOf,
  zeroStagesOf,
  type KnobContext,
  type PlanCandidate,
  type PlanKnobs,
} from './candidates.js';
import type { PlanLayout } from './layouts.js';
import type { PlanSpace, Recompute } from './space.js';

/**
 * Memory first: the knobs of one layout are counted against the GPU's memory (and, with offload, the host's) before
 * anything is simulated, and a setting is dropped only where another one that fits costs no more time on any axis:
 * - recomputation beyond the least that fits repeats forward work (none < selective < full);
 * - optimizer offload, where no offload fits with the same or less recomputation, moves the optimizer step to the host
 *   CPUs for nothing (with less recomputation it is kept: the host's Adam may cost less than recomputing every
 *   micro-batch);
 * - ZeRO-3, where ZeRO-2 fits with the same or less recomputation and offload, adds the weight all-gathers of every
 *   forward and backward to the same gradient traffic.
 * ZeRO-0, 1 and 2 are all kept: a higher stage moves the same gradient bytes and runs a shorter optimizer step.
 */
export type MemoryRule =
  | 'more recompute than needed'
  | 'offload where the GPUs hold the state'
  | 'ZeRO-3 where ZeRO-2 fits'
  | 'does not fit in memory';

export interface PruneOutcome {
  kept: PlanCandidate[];
  /** The memory of the fullest GPU of each kept candidate, bytes. */
  keptBytes: number[];
  removed: Partial<Record<MemoryRule, number>>;
  /** Candidates the scenario checks refused, by the field they named (one example message each). */
  refused: Record<string, { count: number; example: string }>;
}

/** What resolving and counting the memory of one candidate says. */
export type MemoryVerdict = { fits: boolean; peakBytesPerGpu: number } | { refused: { path: string; message: string } };

const RECOMPUTE_ORDER: readonly Recompute[] = ['none', 'selective', 'full'];

/** Counts one candidate's memory: `resolve` turns the sets into the scenario (throwing its ScenarioError). */
export function memoryVerdict(resolve: (sets: string[]) => Scenario, sets: string[]): MemoryVerdict {
  let s: Scenario;
  try {
    s = resolve(sets);
  } catch (err) {
    if (err instanceof InvalidScenarioError)
      return { refused: { path: err.problems[0]?.path ?? '', message: err.problems[0]?.message ?? err.message } };
    if (err instanceof ScenarioError) return { refused: { path: '', message: err.message } };
    throw err;
  }
  const stages = stageMemories(s);
  const host = hostMemoryPerNode(s, stages);
  return {
    fits: stages.every((m) => m.fits) && host?.fits !== false,
    peakBytesPerGpu: Math.max(...stages.map((m) => m.totalBytes)),
  };
}

/** A (offload, recompute) choice that fits, with its memory. */
interface Fit {
  knobs: PlanKnobs;
  bytes: number;
}

const OFFLOAD_RANK = { none: 0, cpu: 1 } as const;
/** `a` costs no more time than `b` on either axis: no more recomputation and no more offload. */
const noCostlier = (a: PlanKnobs, b: PlanKnobs) =>
  RECOMPUTE_ORDER.indexOf(a.recompute) <= RECOMPUTE_ORDER.indexOf(b.recompute) &&
  OFFLOAD_RANK[a.offload] <= OFFLOAD_RANK[b.offload];

/** The knobs of one layout that survive the memory rules. */
export function pruneLayout(
  layout: PlanLayout,
  space: PlanSpace,
  ctx: KnobContext,
  resolve: (sets: string[]) => Scenario,
): PruneOutcome {
  const out: PruneOutcome = { kept: [], keptBytes: [], removed: {}, refused: {} };
  const count = (rule: MemoryRule, n = 1) => (out.removed[rule] = (out.removed[rule] ?? 0) + n);
  const recomputes = RECOMPUTE_ORDER.filter((r) => space.recompute.includes(r));
  /** The least recomputation that fits with these knobs, counting the rest; undefined when none fits. */
  const leastFit = (base: Omit<PlanKnobs, 'recompute'>): Fit | undefined => {
    for (const [k, recompute] of recomputes.entries()) {
      const knobs: PlanKnobs = { ...base, recompute };
      const verdict = memoryVerdict(resolve, candidateSets({ layout, knobs }, ctx));
      if ('refused' in verdict) {
        const key = verdict.refused.path || '(scenario)';
        out.refused[key] ??= { count: 0, example: verdict.refused.message };
        out.refused[key].count++;
      } else if (verdict.fits) {
        if (recomputes.length - k - 1 > 0) count('more recompute than needed', recomputes.length - k - 1);
        return { knobs, bytes: verdict.peakBytesPerGpu };
      } else count('does not fit in memory');
    }
    return undefined;
  };
  for (const sequenceParallel of sequenceParallelOf(space, layout, ctx)) {
    for (const tpCommOverlap of tpCommOverlapOf(space, layout, sequenceParallel, ctx)) {
      let zero2: Fit[] = [];
      for (const zero of zeroStagesOf(space, layout)) {
        const fits: Fit[] = [];
        for (const offload of offloadsOf(space, zero, ctx)) {
          const fit = leastFit({ zero, offload, sequenceParallel, tpCommOverlap });
          if (!fit) continue;
          if (fits.some((f) => noCostlier(f.knobs, fit.knobs))) count('offload where the GPUs hold the state');
          else if (zero === 3 && zero2.some((f) => noCostlier(f.knobs, fit.knobs))) count('ZeRO-3 where ZeRO-2 fits');
          else fits.push(fit);
        }
        if (zero === 2) zero2 = fits;
        for (const f of fits) {
          out.kept.push({ layout, knobs: f.knobs });
          out.keptBytes.push(f.bytes);
        }
      }
    }
  }
  return out;
}

/** Adds one layout's outcome into a running total. */
export function addPruneOutcome(total: PruneOutcome, part: PruneOutcome): void {
  total.kept.push(...part.kept);
  total.keptBytes.push(...part.keptBytes);
  addCounts(total.removed, part.removed);
  addRefused(total.refused, part.refused);
}

/** Adds counts by name into a running total (and returns it). */
export function addCounts<K extends string>(
  total: Partial<Record<K, number>>,
  part: Partial<Record<K, number>>,
): Partial<Record<K, number>> {
  for (const [k, n] of Object.entries(part) as [K, number][]) total[k] = (total[k] ?? 0) + n;
  return total;
}

/** Adds refusals by field into a running total, keeping the first example of each. */
export function addRefused(total: PruneOutcome['refused'], part: PruneOutcome['refused']): void {
  for (const [path, r] of Object.entries(part)) {
    total[path] ??= { count: 0, example: r.example };
    total[path].count += r.count;
  }
}
