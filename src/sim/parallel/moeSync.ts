import type { ModelSpec } from '../workload/model.js';
import type { TpSync } from './tpSync.js';
import { sortsByLocalExpert } from '../workload/moeOps.js';

/** What places one layer's expert all-to-alls: the model's experts, the parallelism and the tokens of one rank. */
export interface MoeSyncContext {
  model: ModelSpec;
  tp: number;
  ep: number;
  /** Expert tensor-parallel size (tp unless the scenario gives its own). */
  etp: number;
  /** Tokens of one micro-batch on the rank's TP group (b·s/cp). */
  tokens: number;
  /** Tokens the rank routes: tokens / tp with sequence parallelism. */
  routedTokens: number;
  elementBytes: number;
  /**
   * The busiest expert-parallel rank's token–expert pairs against the balanced share (routing.ts): it receives that
   * multiple of a balanced rank's tokens, and every rank's all-to-all waits for it. Absent: 1.
   */
  loadFactor?: number;
  /** `deepep`: the dispatch and combine run as DeepEP's (collectives/deepEpDispatch.ts); absent: NCCL all-to-alls. */
  dispatcher?: 'alltoall' | 'deepep';
}

/**
 * The collectives around a layer's routed experts, as Megatron-Core's MoEAlltoAllTokenDispatcher issues them
 * (megatron/core/transformer/moe/token_dispatcher.py): after `permute`, the dispatch all-to-all over the
 * expert-parallel group (each rank sends its routed tokens' k copies, k·T_routed·h elements) and, with tp > 1, the
 * all-gather of the received tokens over the TP group (the experts keep the attention's tp); after `experts.fc2`, the
 * reduce-scatter over TP and the combine all-to-all. The backward mirrors each one: a gradient all-to-all after
 * `unpermute.bwd` and after the experts' fc1 backward, the gather after `unpermute.bwd`'s all-to-all and the
 * reduce-scatter before the last. With more than one local expert the received rows are sorted by expert and back
 * (`experts.sort`, `experts.unsort`, moeOps.ts): the combine's exchanges then follow `experts.unsort`, and the
 * dispatch gradient's follow `experts.sort.bwd`. Every one blocks the op after it (the experts need their tokens; no
 * overlap with another micro-batch). With the DeepEP dispatcher the four exchanges are DeepEP's dispatch and combine,
 * of the same size (the routed copies), each token sent once to each node and GPU it reaches.
 */
export function moeSyncPoints(names: readonly string[], ctx: MoeSyncContext): TpSync[] {
  const moe = ctx.model.moe;
  if (!moe || (ctx.ep <= 1 && ctx.etp <= 1)) return [];
  const copiesBytes = ctx.routedTokens * moe.topK * ctx.model.hidden * ctx.elementBytes * (ctx.loadFactor ?? 1);
  const gatheredBytes = copiesBytes * ctx.etp;
  // The expert tensor-parallel group is the TP group unless the scenario gives the experts a tp of their own.
  const etpGroup = ctx.etp === ctx.tp ? {} : { group: 'etp' as const };
  const sorted = sortsByLocalExpert(moe, ctx.ep, ctx.dispatcher);
  const beforeCombine = sorted ? 'experts.unsort' : 'experts.fc2';
  const afterExpertGrads = sorted ? 'experts.sort.bwd' : 'experts.fc1.wgrad';
  const out: TpSync[] = [];
  names.forEach((raw, i) => {
    const name = raw.startsWith('recompute.') ? raw.slice('recompute.'.length) : raw;
    const sync = (s: Omit<TpSync, 'afterOp' | 'neededBy'>) =>
      out.push({ ...s, afterOp: i, neededBy: i + 1, expert: true });
    const allToAll = (label: string) =>
      ctx.ep > 1 &&
      sync(
        ctx.dispatcher === 'deepep'
          ? { op: 'ep_dispatch', bytes: copiesBytes, label: `EP DeepEP ${label}`, group: 'ep' }
          : { op: 'all_to_all', bytes: copiesBytes, label: `EP all-to-all ${label}`, group: 'ep' },
      );
    const tpGather = (label: string) =>
      ctx.etp > 1 && sync({ op: 'all_gather', bytes: gatheredBytes, label: `TP all-gather ${label}`, ...etpGroup });
    const tpScatter = (label: string) =>
      ctx.etp > 1 &&
      sync({ op: 'reduce_scatter', bytes: gatheredBytes, label: `TP reduce-scatter ${label}`, ...etpGroup });
    if (name === 'permute') {
      allToAll('dispatch');
      tpGather('dispatched tokens');
    } else if (name === beforeCombine) {
      tpScatter('expert outputs');
      allToAll('combine');
    } else if (name === 'unpermute.bwd') {
      allToAll('combine gradient');
      tpGather('output gradients');
    } else if (name === afterExpertGrads) {
      tpScatter('token gradients');
      allToAll('dispatch gradient');
    }
  });
  return out;
}
