import { ScenarioError } from '../sim/errors.js';
import { InvalidScenarioError } from '../scenario/errors.js';
import type { Scenario } from '../scenario/resolve.js';
import { hostMemoryPerNode } from '../sim/memory/hostMemory.js';
import { stageMemories } from '../sim/memory/stageMemory.js';
import { candidateSets, offloadsOf, sequenceParallelOf, tpCommOverlapOf, zeroStagesOf, type KnobContext, type PlanCandidate, type PlanKnobs } from './candidates.js';
import type { PlanLayout } from './layouts.js';
import type { PlanSpace, Recompute } from './space.js';

/**
 * Memory first: the knobs of one layout are counted against the GPU's memory (and, with offload, the host's) before
 * anything is simulated, and only the cheapest setting of each that fits is kept. Each rule trades time for memory,
 * so a setting past the one that fits only costs time:
 * - recomputation beyond the least that fits repeats forward work (none < selective < full);
 * - optimizer offload where the state fits on the GPUs moves the optimizer step to the host CPUs;
 * - ZeRO-3 where ZeRO-2 fits adds the weight all-gathers of every forward and backward to the same gradient traffic.
 * ZeRO-0, 1 and 2 are all kept: a higher stage moves the same gradient bytes and runs a shorter optimizer step.
 */
export type MemoryRule = 'more recompute than needed' | 'offload where the GPUs hold the state' | 'ZeRO-3 where ZeRO-2 fits' | 'does not fit in memory';

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
    if (err instanceof InvalidScenarioError) return { refused: { path: err.problems[0]?.path ?? '', message: err.problems[0]?.message ?? err.message } };
    if (err instanceof ScenarioError) return { refused: { path: '', message: err.message } };
    throw err;
  }
  const stages = stageMemories(s);
  const host = hostMemoryPerNode(s, stages);
  return { fits: stages.every((m) => m.fits) && host?.fits !== false, peakBytesPerGpu: Math.max(...stages.map((m) => m.totalBytes)) };
}

/** The knobs of one layout that survive the memory rules. */
export function pruneLayout(layout: PlanLayout, space: PlanSpace, ctx: KnobContext, resolve: (sets: string[]) => Scenario): PruneOutcome {
  const out: PruneOutcome = { kept: [], keptBytes: [], removed: {}, refused: {} };
  const count = (rule: MemoryRule, n = 1) => (out.removed[rule] = (out.removed[rule] ?? 0) + n);
  const recomputes = RECOMPUTE_ORDER.filter((r) => space.recompute.includes(r));
  for (const sequenceParallel of sequenceParallelOf(space, layout, ctx)) {
    for (const tpCommOverlap of tpCommOverlapOf(space, layout, sequenceParallel, ctx)) {
      let zero2Fits = false;
      for (const zero of zeroStagesOf(space, layout)) {
        const offloads = offloadsOf(space, zero, ctx);
        const options = offloads.length * recomputes.length;
        if (zero === 3 && zero2Fits) {
          count('ZeRO-3 where ZeRO-2 fits', options);
          continue;
        }
        let found = false;
        for (const offload of offloads) {
          for (const recompute of recomputes) {
            const knobs: PlanKnobs = { zero, offload, recompute, sequenceParallel, tpCommOverlap };
            const candidate = { layout, knobs };
            const verdict = memoryVerdict(resolve, candidateSets(candidate, ctx));
            if ('refused' in verdict) {
              const key = verdict.refused.path || '(scenario)';
              out.refused[key] ??= { count: 0, example: verdict.refused.message };
              out.refused[key].count++;
            } else if (verdict.fits) {
              out.kept.push(candidate);
              out.keptBytes.push(verdict.peakBytesPerGpu);
              found = true;
              break;
            } else count('does not fit in memory');
          }
          if (found) {
            // The rest of this offload's recomputations, and every later offload, cost time for memory not needed.
            const more = recomputes.length - recomputes.indexOf(out.kept[out.kept.length - 1].knobs.recompute) - 1;
            if (more > 0) count('more recompute than needed', more);
            const laterOffloads = offloads.length - offloads.indexOf(offload) - 1;
            if (laterOffloads > 0) count('offload where the GPUs hold the state', laterOffloads * recomputes.length);
            break;
          }
        }
        if (zero === 2 && found) zero2Fits = true;
      }
    }
  }
  return out;
}

/** Adds one layout's outcome into a running total. */
export function addPruneOutcome(total: PruneOutcome, part: PruneOutcome): void {
  total.kept.push(...part.kept);
  total.keptBytes.push(...part.keptBytes);
  for (const [rule, n] of Object.entries(part.removed) as [MemoryRule, number][]) total.removed[rule] = (total.removed[rule] ?? 0) + n;
  for (const [path, r] of Object.entries(part.refused)) {
    total.refused[path] ??= { count: 0, example: r.example };
    total.refused[path].count += r.count;
  }
}
