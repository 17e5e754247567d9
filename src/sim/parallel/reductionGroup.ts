import type { StageParameters } from './stageParameters.js';
import type { CompileScope, StagePlan } from './stepTypes.js';

/**
 * One simulated TP rank's data-parallel group of one stage, whose gradients the reduction moves: symmetric mode
 * simulates only the first replicas, but the collectives still move the whole group's data, and (beside TP rank 0)
 * the DP groups of the TP ranks not simulated reduce alongside, as shadows.
 */
export interface ReductionGroup {
  scope: CompileScope;
  stage: StagePlan;
  params: StageParameters;
  /** The TP rank (index among the simulated ones). */
  t: number;
  /** The whole data-parallel group (the layout's d axis: replicas × context-parallel ranks). */
  group: readonly number[];
  /** Indices on the d axis of the simulated replicas. */
  replicas: number[];
  /** Their ranks, whose streams the collectives occupy. */
  members: readonly number[];
  shadowGroups?: readonly (readonly number[])[];
  /** The group reduces the routed experts' gradients, over the expert-data-parallel ranks (dp × cp / ep of them). */
  expert?: boolean;
}

/** Replica d's last backward task (over the stage's chunks) in micro-batch `mb`, on the group's TP rank. */
export function lastBackwardOf(g: ReductionGroup, d: number, mb: number): number {
  const { passes, key, ctx } = g.scope;
  let last = -1;
  for (let c = 0; c < g.stage.chunks.length; c++)
    last = Math.max(last, passes.get(key(d, c * ctx.pp + g.stage.stage, mb, 'B'))!.last[g.t]);
  return last;
}

/** Replica d's last backward task of the step (its last micro-batch's). */
export function stepBackwardEnd(g: ReductionGroup, d: number): number {
  return lastBackwardOf(g, d, g.scope.ctx.microBatches - 1);
}
