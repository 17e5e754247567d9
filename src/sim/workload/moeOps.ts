import { llamaLayerPrefix } from './mtp.js';
import { activationStage, type LayerContext } from './layerContext.js';
import { balancedRoutedTokens, expertsPerRank, type MoeSpec } from './moe.js';
import { elementwiseOp, gemmOp, linearStage, type Op, type Stage } from './ops.js';

/** What the MoE builders need besides the layer context: the layer's experts, its index and the expert parallelism. */
export interface MoeLayerShape {
  moe: MoeSpec;
  layer: number;
  /** Expert-parallel ranks the experts are split over. */
  ep: number;
  /** Expert tensor-parallel ranks each expert's width is split over (tp by default). */
  etp: number;
  /** The busiest expert-parallel rank's pairs against the balanced share (routing.ts); 1 when balanced. */
  loadFactor: number;
  /** `deepep`: DeepEP's dispatch, which sends tokens as they are (no sort by local expert here); absent: all-to-all. */
  dispatcher?: 'alltoall' | 'deepep';
}

/**
 * Token–expert rows one rank's experts compute per micro-batch: each rank routes its own tokens (with sequence
 * parallelism 1/t of the micro-batch's), receives as many routed copies back from its expert-parallel group when
 * routing is balanced (× the busiest rank's load factor otherwise), and gathers those of its etp − 1 expert
 * tensor-parallel peers, whose experts' other shards it holds.
 */
export function expertRows(c: LayerContext, moe: MoeSpec, etp: number, loadFactor = 1): number {
  return balancedRoutedTokens(c.spTokens, moe) * etp * loadFactor;
}

/**
 * The router (Megatron-Core's TopKRouter): a linear h → E on the rank's own tokens and the softmax and top-k over its
 * logits (fp32, 4 bytes each: read, written, read again).
 */
function routerStage(c: LayerContext, s: MoeLayerShape): Stage[] {
  const p = `${llamaLayerPrefix(c.model, s.layer)}mlp.`;
  const T = c.spTokens;
  const E = s.moe.experts;
  return [
    linearStage('router', T, c.h, E, c.dtype, [p + 'router.weight']),
    {
      forward: [elementwiseOp('router.topk', T * E, 10, 3 * T * E * 4)],
      backward: [elementwiseOp('router.topk.bwd', T * E, 10, 3 * T * E * 4)],
    },
  ];
}

/**
 * The permutation that sorts the rank's tokens by expert, k copies each (`permute` in Megatron-Core's moe_utils: a
 * gather), and its inverse, which weighs each copy by its routing probability and sums the k copies (`unpermute`).
 * Memory-bound: each reads and writes every copy once, besides the tokens themselves.
 */
function permuteStage(c: LayerContext, s: MoeLayerShape, name: 'permute' | 'unpermute'): Stage {
  const T = c.spTokens;
  const copies = T * s.moe.topK * c.h;
  const bytes = (copies + T * c.h) * c.e;
  const flops = name === 'unpermute' ? 2 : 0;
  return {
    forward: [elementwiseOp(name, copies, flops, bytes)],
    backward: [elementwiseOp(`${name}.bwd`, copies, flops, bytes + (name === 'unpermute' ? copies * c.e : 0))],
  };
}

/**
 * Megatron-Core's second permutation (`sort_chunks_by_idxs` in moe_utils, "Permutation 2: Sort tokens by local
 * expert" in the alltoall dispatcher's dispatch_postprocess): with more than one local expert, the rows received from
 * each expert-parallel (and expert-TP) peer arrive grouped by sender and are copied into groups by local expert for
 * the grouped GEMM; `experts.unsort` ("Unpermutation 2", combine_preprocess) copies the outputs back before the
 * combine. Each reads and writes every row the rank's experts compute, at the full hidden width; its backward is the
 * inverse copy, of the same size.
 */
function chunkSortStage(c: LayerContext, s: MoeLayerShape, name: 'experts.sort' | 'experts.unsort'): Stage {
  const elements = expertRows(c, s.moe, s.etp, s.loadFactor) * c.h;
  const bytes = 2 * elements * c.e;
  return {
    forward: [elementwiseOp(name, elements, 0, bytes)],
    backward: [elementwiseOp(`${name}.bwd`, elements, 0, bytes)],
  };
}

/** Whether the layer's received rows are sorted by local expert (`chunkSortStage`): the all-to-all, E/ep > 1. */
export function sortsByLocalExpert(moe: MoeSpec, ep: number, dispatcher?: 'alltoall' | 'deepep'): boolean {
  return dispatcher !== 'deepep' && expertsPerRank(moe, ep) > 1;
}

/**
 * A grouped GEMM over the rank's E/ep experts (Megatron-Core's GroupedMLP, cuBLAS grouped / CUTLASS grouped GEMM):
 * one problem per local expert with its share of the rows, so its efficiency is that of the per-expert shape: few
 * tokens an expert make a thin GEMM.
 */
// eslint-disable-next-line max-params -- one grouped linear: its name, the experts' shape and the tensors it completes
function groupedLinearStage(
  c: LayerContext,
  s: MoeLayerShape,
  name: string,
  inF: number,
  outF: number,
  param: string,
): Stage {
  const groups = expertsPerRank(s.moe, s.ep);
  const rows = expertRows(c, s.moe, s.etp, s.loadFactor) / groups;
  const lead = [inF, outF];
  return {
    forward: [gemmOp(name, rows, outF, inF, groups, c.dtype, undefined, lead)],
    backward: [
      gemmOp(`${name}.dgrad`, rows, inF, outF, groups, c.dtype, undefined, lead),
      gemmOp(`${name}.wgrad`, inF, outF, rows, groups, c.dtype, [param], lead),
    ],
  };
}

/**
 * The routed experts of one layer on one rank, from the router to the combined output: router, permute, (dispatch
 * all-to-all), the sort by local expert, expert fc1, SwiGLU, expert fc2, its inverse sort, (combine all-to-all),
 * unpermute. The all-to-alls and the TP gathers around the experts are syncs (parallel/moeSync.ts) at the `permute`,
 * the last expert op before the combine (`experts.unsort`, else `experts.fc2`) and their backward ops.
 */
export function routedExpertStages(c: LayerContext, s: MoeLayerShape): Stage[] {
  const p = `${llamaLayerPrefix(c.model, s.layer)}mlp.experts.`;
  const f = s.moe.expertFfnHidden / s.etp;
  const rows = expertRows(c, s.moe, s.etp, s.loadFactor);
  const act = activationStage(c, rows, f);
  const named = (st: Stage): Stage => ({
    forward: st.forward.map((op) => rename(op, 'experts.')),
    backward: st.backward.map((op) => rename(op, 'experts.')),
  });
  const sorts = sortsByLocalExpert(s.moe, s.ep, s.dispatcher);
  return [
    ...routerStage(c, s),
    permuteStage(c, s, 'permute'),
    ...(sorts ? [chunkSortStage(c, s, 'experts.sort')] : []),
    groupedLinearStage(c, s, 'experts.fc1', c.h, 2 * f, p + 'gate_up_proj.weight'),
    named(act),
    groupedLinearStage(c, s, 'experts.fc2', f, c.h, p + 'down_proj.weight'),
    ...(sorts ? [chunkSortStage(c, s, 'experts.unsort')] : []),
    permuteStage(c, s, 'unpermute'),
  ];
}

function rename(op: Op, prefix: string): Op {
  return { ...op, name: prefix + op.name };
}

/** The shared experts' output added to the routed experts' (on the rank's own tokens). */
export function sharedExpertAddStage(c: LayerContext): Stage {
  const n = c.spTokens * c.h;
  return { forward: [elementwiseOp('shared.add', n, 1, 3 * n * c.e)], backward: [] };
}
