import { elementsPerTpRank, lastStageEmbeddingCopy } from '../workload/model.js';
import { stepBackwardEnd, type ReductionGroup } from './reductionGroup.js';
import type { StageGradients } from './stepTypes.js';

/**
 * Tied embeddings over a pipeline: the first and last stages all-reduce the embedding's gradient after their
 * data-parallel reduction and before either steps (Megatron's _allreduce_word_embedding_grads). It goes on the tp
 * stream: on the comm stream the first stage's weight all-gather, made earlier, would sit ahead of it. One per
 * replica: each pair of ends waits for its own gradients, and gates its own two optimizer steps (the first stage's,
 * in `first.tiedEnds`; the caller makes the last stage's wait for the returned tasks). Nothing off the last stage.
 */
export function addTiedEmbeddingSync(g: ReductionGroup, lastComm: number, first: StageGradients | undefined): number[] {
  const { ctx, program, layout } = g.scope;
  const { tp, pp } = ctx;
  const tied = pp > 1 ? lastStageEmbeddingCopy(ctx.setup.model) : undefined;
  if (!tied || g.stage.stage !== pp - 1 || !first?.tiedEnds) return [];
  const firstEnds = first.tiedEnds;
  const { t, replicas } = g;
  const dp = layout.dp;
  const tpSim = g.scope.simulatedTp;
  // The pairs nobody simulates (other replicas, other TP ranks) exchange alongside, as shadows.
  const ends = (u: number, e: number) => layout.pair(layout.rank(u, e, 0), layout.rank(u, e, pp - 1));
  const shadowsOf =
    t === 0
      ? [
          ...Array.from({ length: dp - replicas.length }, (_, i) => ends(0, replicas.length + i)),
          ...Array.from({ length: tp - tpSim }, (_, u) =>
            Array.from({ length: dp }, (_, e) => ends(tpSim + u, e)),
          ).flat(),
        ].filter(g.scope.needsShadow)
      : [];
  return replicas.map((d, i) => {
    const pair = ends(t, d);
    const deps = [...firstEnds.done[t], lastComm >= 0 ? lastComm : stepBackwardEnd(g, d), ...(first.pendingTp ?? [])];
    const bytes = elementsPerTpRank(tied, tp) * ctx.precision.gradientBytes;
    const sync = program.collective(
      'dp-allreduce',
      'all-reduce tied embedding gradients (first and last stage)',
      { op: 'all_reduce', group: pair, bytes, shadowGroups: shadowsOf.length > 0 ? shadowsOf : undefined },
      deps,
      -1,
      'tp',
      pair,
    );
    program.addDep(firstEnds.optimizers[t][i], sync);
    return sync;
  });
}

/** On the first stage of a pipeline with tied embeddings: records its ends for the last stage's sync. */
export function recordTiedEnds(g: ReductionGroup, lastComm: number, optimizerIds: number[]): void {
  const { ctx } = g.scope;
  if (ctx.pp <= 1 || !lastStageEmbeddingCopy(ctx.setup.model) || g.stage.stage !== 0) return;
  const ends = (g.stage.gradients.tiedEnds ??= { done: [], optimizers: [] });
  ends.done[g.t] = lastComm >= 0 ? [lastComm] : g.replicas.map((d) => stepBackwardEnd(g, d));
  ends.optimizers[g.t] = optimizerIds;
}
