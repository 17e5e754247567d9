import type { PlanResult } from './search.js';

/**
 * What "best" means across GPU counts: `throughput` the most tokens per second (and with it the fewest days for a
 * token budget, `time`), `cost` the fewest GPU-seconds per token (GPUs / tokens per second, what a run pays for).
 */
export const OBJECTIVES = ['throughput', 'cost', 'time'] as const;
export type Objective = (typeof OBJECTIVES)[number];

/** The figure an objective minimises for a plan's winner: seconds per token, or GPU-seconds per token. */
export function objectiveValue(p: PlanResult, objective: Objective): number | undefined {
  const w = p.rows[0];
  if (!w) return undefined;
  return objective === 'cost' ? p.gpus / w.sim.tokensPerS : 1 / w.sim.tokensPerS;
}

/** The index of the plan whose winner is best for the objective (the fewest GPUs on a tie); undefined if none fits. */
export function bestSize(plans: readonly PlanResult[], objective: Objective): number | undefined {
  let best: number | undefined;
  for (const [i, p] of plans.entries()) {
    const v = objectiveValue(p, objective);
    if (v === undefined) continue;
    if (best === undefined || v < objectiveValue(plans[best], objective)!) best = i;
  }
  return best;
}
