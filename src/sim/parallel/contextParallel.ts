import { headDim, kvHeadsPerRank, type ModelSpec } from '../workload/model.js';
import type { CpCommType } from '../workload/ops.js';
import type { TpSync } from './tpSync.js';

export interface CpContext {
  model: ModelSpec;
  cp: number;
  tp: number;
  /** Tokens of one micro-batch on one rank: b·s/cp. */
  tokens: number;
  /** Bytes of one activation element. */
  elementBytes: number;
  /** Which of Transformer Engine's implementations runs (absent: `p2p`, the ring). */
  commType?: CpCommType;
}

/** Bytes of the keys and values one rank holds for one micro-batch: the block that goes round the ring. */
export function kvBlockBytes(ctx: CpContext): number {
  return 2 * ctx.tokens * kvHeadsPerRank(ctx.model, ctx.tp) * headDim(ctx.model) * ctx.elementBytes;
}

/**
 * The largest working memory context parallelism's attention holds for one layer beyond the saved activations, bytes
 * per rank (Transformer Engine, context_parallel.py):
 * - `p2p`: the forward keeps every key/value block it received until the pass ends (cp blocks); the backward holds two
 *   buffers of keys/values and their gradients (4 blocks);
 * - `all_gather`: the gathered keys and values (cp blocks) in forward; in backward those again and their full-length
 *   gradients before the reduce-scatter (2·cp blocks);
 * - `a2a`: the exchanged queries, keys and values beside the rank's own (one more copy of them).
 */
export function cpBufferBytes(ctx: CpContext): number {
  if (ctx.cp <= 1) return 0;
  const kv = kvBlockBytes(ctx);
  switch (ctx.commType ?? 'p2p') {
    case 'p2p':
      return Math.max(ctx.cp, 4) * kv;
    case 'all_gather':
      return 2 * ctx.cp * kv;
    case 'a2a':
      return queryBytes(ctx) + kv;
  }
}

/** Bytes of the queries one rank holds for one micro-batch (as many as its attention output). */
function queryBytes(ctx: CpContext): number {
  return (ctx.tokens * ctx.model.heads * headDim(ctx.model) * ctx.elementBytes) / ctx.tp;
}

/**
 * The communication of context parallelism inside one pass, by `commType`: the ring's (`p2p`, below),
 * `all_gather`'s or `a2a`'s (`collectiveSyncPoints`).
 */
export function cpSyncPoints(names: readonly string[], ctx: CpContext): TpSync[] {
  if (ctx.cp <= 1) return [];
  return (ctx.commType ?? 'p2p') === 'p2p' ? ringSyncPoints(names, ctx) : collectiveSyncPoints(names, ctx);
}

/**
 * The exchanges of ring attention inside one pass (Transformer Engine's `AttnFuncWithCPAndKVP2P`, which Megatron
 * runs for `--context-parallel-size`): before step i's kernel (`attn.core.cp{i}`, attentionOps.ts) computes with the
 * block of keys and values it holds, the rank posts the send of that block to the next rank of the ring and the
 * receive of the next block, so exchange i + 1 runs while kernel i computes and kernel i + 1 waits for it: cp − 1
 * exchanges per forward. Backward passes the keys and values round the same way, and from step 1 on also the
 * gradients of the keys and values accumulated so far (2 blocks); after the last step the rank sends on the
 * gradients it finished, which the layer's backward waits for: 2·(cp − 1) blocks in all. Each exchange is a send to
 * the ring's next rank (`group: 'cp'`; the step compiler pairs each rank with its successor).
 */
function ringSyncPoints(names: readonly string[], ctx: CpContext): TpSync[] {
  const out: TpSync[] = [];
  const block = kvBlockBytes(ctx);
  const at = new Map<string, number>();
  names.forEach((raw, i) => at.set(raw, i));
  for (const base of ['attn.core', 'recompute.attn.core', 'attn.core.bwd'] as const) {
    const backward = base === 'attn.core.bwd';
    for (let i = 1; i < ctx.cp; i++) {
      const before = at.get(`${base}.cp${i - 1}`);
      const step = at.get(`${base}.cp${i}`);
      if (before === undefined || step === undefined) continue;
      const withGrads = backward && i >= 2;
      out.push({
        op: 'send_recv',
        bytes: withGrads ? 2 * block : block,
        afterOp: before - 1,
        neededBy: step,
        label: `CP ring keys/values${withGrads ? ' + gradients' : ''} → step ${i}`,
        group: 'cp',
      });
    }
    const last = at.get(`${base}.cp${ctx.cp - 1}`);
    if (backward && last !== undefined)
      out.push({
        op: 'send_recv',
        bytes: block,
        afterOp: last,
        neededBy: last + 1,
        label: 'CP ring key/value gradients, last step',
        group: 'cp',
      });
  }
  return out;
}

/**
 * The collectives of `all_gather` and `a2a` inside one pass, each blocking (issued right before, or right after, the
 * attention calls and waited for by the next op), as Transformer Engine issues them:
 * - `all_gather` (`AttnFuncWithCPAndKVAllGather`): forward all-gathers the keys and values before its two calls;
 *   backward gathers them again (they are not kept) and, after its two calls, reduce-scatters their gradients.
 * - `a2a` (`AttnFuncWithCPAndQKVOA2A`): forward exchanges queries, keys and values all-to-all before the call and the
 *   output after it; backward the output's gradient before and the gradients of queries, keys and values after.
 * They run as collectives over the context-parallel group (`group: 'cp'`), so NCCL's rings use every NIC of the nodes
 * they span. An all-to-all of a rank's X bytes over cp ranks sends (cp − 1)/cp of X from each rank, which is what an
 * all-gather into X bytes sends: it runs as one (the engine has no all-to-all; across nodes NCCL's all-to-all sends to
 * every peer directly, the same bytes per GPU and NIC).
 */
function collectiveSyncPoints(names: readonly string[], ctx: CpContext): TpSync[] {
  const out: TpSync[] = [];
  const cp = ctx.cp;
  const kv = kvBlockBytes(ctx);
  const q = queryBytes(ctx);
  const at = new Map<string, number>();
  names.forEach((raw, i) => at.set(raw, i));
  const gather = ctx.commType === 'all_gather';
  const coll = (op: 'all_gather' | 'reduce_scatter', bytes: number, afterOp: number, label: string) =>
    out.push({ op, bytes, afterOp, neededBy: afterOp + 1, label, group: 'cp' });
  for (const base of ['attn.core', 'recompute.attn.core', 'attn.core.bwd'] as const) {
    const backward = base === 'attn.core.bwd';
    const first = at.get(gather ? `${base}.cp0` : base);
    const last = at.get(gather ? `${base}.cp1` : base);
    if (first === undefined || last === undefined) continue;
    if (gather) {
      // The whole sequence's keys and values: cp blocks gathered, and their gradients reduce-scattered back.
      coll('all_gather', cp * kv, first - 1, 'CP all-gather keys/values');
      if (backward) coll('reduce_scatter', cp * kv, last, 'CP reduce-scatter key/value gradients');
    } else {
      // An all-to-all of the rank's X bytes sends (cp − 1)/cp of X to the others: an all-gather into X bytes.
      coll(
        'all_gather',
        backward ? q : q + kv,
        first - 1,
        backward ? 'CP all-to-all output gradient' : 'CP all-to-all queries/keys/values',
      );
      coll(
        'all_gather',
        backward ? q + kv : q,
        last,
        backward ? 'CP all-to-all query/key/value gradients' : 'CP all-to-all output',
      );
    }
  }
  return out;
}
