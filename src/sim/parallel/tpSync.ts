import type { CollectiveOp } from '../collectives/types.js';
import { attentionWidth, mlpSizesOf, qkvWidth, type ModelSpec } from '../workload/model.js';

/** `megatron`: column- then row-parallel linears; `allgather`: every linear's output shards gathered. */
export type TpStyle = 'megatron' | 'allgather';

/**
 * A tensor-parallel collective inside a block. It is issued right after op `afterOp` (−1: before the
 * first op) and must be done before op `neededBy` starts (Megatron overlaps some backward
 * collectives with the weight-gradient GEMM that follows).
 */
export interface TpSync {
  op: CollectiveOp;
  bytes: number;
  afterOp: number;
  neededBy: number;
  label: string;
  /**
   * The group it runs over: the TP group (default), a send to the next rank of the context-parallel ring, or the
   * expert-parallel group (moeSync.ts).
   */
  group?: 'tp' | 'cp' | 'ep' | 'etp';
  /** One of the exchanges around a layer's routed experts (moeSync.ts): the all-to-alls and their TP gathers. */
  expert?: true;
}

export interface TpContext {
  model: ModelSpec;
  tp: number;
  sequenceParallel: boolean;
  style: TpStyle;
  /** Tokens of one micro-batch (b·s). */
  tokens: number;
  /** Bytes of one activation element (2 in mixed precision). */
  elementBytes: number;
  /** Overlap input-gradient all-reduces with the weight-gradient GEMM (Megatron default true). */
  asyncGradReduce?: boolean;
  /**
   * FP8 training: sequence parallelism's all-gathers of the linear layers' inputs and output gradients move their
   * FP8 copies, one byte an element (Transformer Engine quantizes before `gather_along_first_dim`; workload/fp8.ts).
   */
  fp8Gathers?: boolean;
}

/**
 * The input width of a column-parallel linear, whose input sequence parallelism all-gathers first and whose input
 * gradient is reduced (reduce-scattered with SP) behind its weight gradient; undefined for any other op. QKV, fc1 and
 * the LM head take the hidden state; latent attention's up-projections (Megatron-Core's MLA spec: duplicated
 * down-projections on each rank's tokens, column-parallel layer-norm up-projections) take the query latent, the
 * key/value latent with the shared rotary key (gathered with it), or the hidden state where the queries are projected
 * directly. The duplicated down-projections need no collective in the step (their weight gradients' all-reduce over
 * the TP group at the step's end is not modelled).
 */
function columnInputWidth(ctx: TpContext, linear: string): number | undefined {
  if (linear === 'qkv' || linear === 'fc1' || linear === 'lm_head') return ctx.model.hidden;
  const mla = ctx.model.mla;
  if (!mla) return undefined;
  if (linear === 'q_up') return mla.qLoraRank;
  if (linear === 'kv_up') return mla.kvLoraRank + mla.qkRopeHeadDim;
  if (linear === 'q_proj') return ctx.model.hidden;
  return undefined;
}

function width(ctx: TpContext, linear: string): { in: number; out: number } {
  const m = ctx.model;
  const h = m.hidden;
  const gated = m.arch === 'llama';
  switch (linear) {
    case 'qkv':
      return { in: h, out: qkvWidth(m) };
    case 'proj':
      return { in: attentionWidth(m), out: h };
    case 'fc1':
      return { in: h, out: gated ? 2 * m.ffnHidden : m.ffnHidden };
    case 'fc2':
      return { in: m.ffnHidden, out: h };
    default:
      return { in: h, out: h };
  }
}

/**
 * Where the TP collectives of one block's op list go (Shoeybi et al. 2019; Korthikanti et al. 2022 for
 * sequence parallelism; Megatron's `LinearWithGradAccumulationAndAsyncCommunication` for the overlap).
 * `names` are the op names in execution order; recomputed forward ops carry a `recompute.` prefix and
 * get the same collectives as the forward.
 */
export function tpSyncPoints(names: readonly string[], ctx: TpContext): TpSync[] {
  if (ctx.model.arch === 'mlp') return mlpSyncPoints(names, ctx);
  if (ctx.tp <= 1) return [];
  const out: TpSync[] = [];
  const full = (w: number) => ctx.tokens * w * ctx.elementBytes;
  const h = ctx.model.hidden;
  // A sequence-parallel all-gather of a transformer linear's input (`w` wide) or output gradient (not the LM head's).
  const linearGather = (name: string, w = h) =>
    ctx.fp8Gathers && !name.startsWith('lm_head') ? ctx.tokens * w : full(w);
  const sp = ctx.sequenceParallel;
  names.forEach((raw, i) => {
    const name = raw.startsWith('recompute.') ? raw.slice('recompute.'.length) : raw;
    const blocking = (op: CollectiveOp, bytes: number, label: string, after = i) =>
      out.push({ op, bytes, afterOp: after, neededBy: after + 1, label });
    const overlapped = (op: CollectiveOp, bytes: number, label: string) =>
      out.push({ op, bytes, afterOp: i, neededBy: i + 2, label });
    if (ctx.style === 'allgather') {
      if (['qkv', 'proj', 'fc1', 'fc2', 'lm_head'].includes(name))
        blocking(
          'all_gather',
          full(name === 'lm_head' ? ctx.model.vocab : width(ctx, name).out),
          `TP all-gather ${name}`,
        );
      if (['qkv.dgrad', 'proj.dgrad', 'fc1.dgrad', 'fc2.dgrad', 'lm_head.dgrad'].includes(name)) {
        const lin = name.replace('.dgrad', '');
        blocking('all_reduce', full(lin === 'lm_head' ? h : width(ctx, lin).in), `TP all-reduce ${name}`);
      }
      if (name === 'embed.lookup') blocking('all_reduce', full(h), 'TP all-reduce embedding');
      return;
    }
    // Megatron: row-parallel outputs (proj, fc2) and the vocab-parallel embedding are reduced; with
    // SP the reduction is a reduce-scatter and column-parallel inputs are all-gathered first.
    if (name === 'proj' || name === 'fc2' || name === 'embed.lookup')
      blocking(sp ? 'reduce_scatter' : 'all_reduce', full(h), `TP ${sp ? 'reduce-scatter' : 'all-reduce'} ${name}`);
    const input = columnInputWidth(ctx, name);
    if (sp && input !== undefined)
      blocking('all_gather', linearGather(name, input), `TP all-gather before ${name}`, i - 1);
    const dgradOf = name.endsWith('.dgrad') ? columnInputWidth(ctx, name.slice(0, -'.dgrad'.length)) : undefined;
    if (dgradOf !== undefined) {
      // The input gradient of a column-parallel linear is reduced while its weight gradient is computed
      // (unless the framework turns that off; sequence parallelism's reduce-scatter is always async).
      if (sp || ctx.asyncGradReduce !== false)
        overlapped(
          sp ? 'reduce_scatter' : 'all_reduce',
          full(dgradOf),
          `TP ${sp ? 'reduce-scatter' : 'all-reduce'} ${name}`,
        );
      else blocking('all_reduce', full(dgradOf), `TP all-reduce ${name}`);
      if (sp)
        out.push({
          op: 'all_gather',
          bytes: linearGather(name, dgradOf),
          afterOp: i - 1,
          neededBy: i + 1,
          label: `TP all-gather input for ${name.replace('.dgrad', '.wgrad')}`,
        });
    }
    if (sp && (name === 'proj.dgrad' || name === 'fc2.dgrad'))
      blocking('all_gather', linearGather(name), `TP all-gather grad before ${name}`, i - 1);
    // The vocab-parallel cross-entropy all-reduces three fp32 values per token over the TP group: the logits' max,
    // the target's logit and the sum of exponentials (megatron/core/tensor_parallel/cross_entropy.py),
    // each one needed before the loss goes on. The loss is one op here, so all three sit between the logits and it.
    if (name === 'loss' && ctx.tp > 1) out.push(...crossEntropySyncs(ctx, i));
  });
  return out.sort((a, b) => a.afterOp - b.afterOp);
}

/**
 * The loss's three all-reduces over split logits (max, target logit, sum of exp; fp32 per token), before the loss op
 * `i`.
 */
function crossEntropySyncs(ctx: TpContext, i: number): TpSync[] {
  return ['max', 'target logit', 'sum of exp'].map((what) => ({
    op: 'all_reduce',
    bytes: ctx.tokens * 4,
    afterOp: i - 1,
    neededBy: i,
    label: `TP all-reduce cross-entropy ${what}`,
  }));
}

/**
 * The TP collectives of an MLP split as mlpOps.ts splits it (Megatron's pairing): an odd-indexed, row-parallel layer
 * `fc{i}` all-reduces its output; an even-indexed, column-parallel one after the first all-reduces its input gradient
 * (overlapped with its weight gradient, as for a transformer's); when the last layer is column-parallel its outputs
 * stay split, and the loss all-reduces three fp32 values per row as the vocab-parallel cross-entropy does.
 */
function mlpSyncPoints(names: readonly string[], ctx: TpContext): TpSync[] {
  if (ctx.tp <= 1) return [];
  const sizes = mlpSizesOf(ctx.model);
  const lastColumn = (sizes.length - 2) % 2 === 0;
  const out: TpSync[] = [];
  names.forEach((raw, i) => {
    const name = raw.startsWith('recompute.') ? raw.slice('recompute.'.length) : raw;
    const fwd = /^fc(\d+)$/.exec(name);
    const dgrad = /^fc(\d+)\.dgrad$/.exec(name);
    if (fwd && Number(fwd[1]) % 2 === 1) {
      out.push({
        op: 'all_reduce',
        bytes: ctx.tokens * sizes[Number(fwd[1]) + 1] * ctx.elementBytes,
        afterOp: i,
        neededBy: i + 1,
        label: `TP all-reduce ${name}`,
      });
    }
    if (dgrad && Number(dgrad[1]) % 2 === 0 && Number(dgrad[1]) > 0) {
      // Overlapped with the weight-gradient GEMM that follows, unless that ends the block (the pass's sends to the
      // previous pipeline stage would not wait for a collective carried past it).
      const overlapped = ctx.asyncGradReduce !== false && i + 2 < names.length;
      out.push({
        op: 'all_reduce',
        bytes: ctx.tokens * sizes[Number(dgrad[1])] * ctx.elementBytes,
        afterOp: i,
        neededBy: overlapped ? i + 2 : i + 1,
        label: `TP all-reduce ${name}`,
      });
    }
    if (name === 'loss' && lastColumn) out.push(...crossEntropySyncs(ctx, i));
  });
  return out.sort((a, b) => a.afterOp - b.afterOp);
}
