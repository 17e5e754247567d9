import { headDim, kvHeadsPerRank, type ModelSpec } from '../workload/model.js';
import type { TpSync } from './tpSync.js';

export interface CpContext {
  model: ModelSpec;
  cp: number;
  tp: number;
  /** Tokens of one micro-batch on one rank: b·s/cp. */
  tokens: number;
  /** Bytes of one activation element. */
  elementBytes: number;
}

/** Bytes of the keys and values one rank holds for one micro-batch: the block that goes round the ring. */
export function kvBlockBytes(ctx: CpContext): number {
  return 2 * ctx.tokens * kvHeadsPerRank(ctx.model, ctx.tp) * headDim(ctx.model) * ctx.elementBytes;
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
export function cpSyncPoints(names: readonly string[], ctx: CpContext): TpSync[] {
  if (ctx.cp <= 1) return [];
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
      out.push({ op: 'send_recv', bytes: withGrads ? 2 * block : block, afterOp: before - 1, neededBy: step, label: `CP ring keys/values${withGrads ? ' + gradients' : ''} → step ${i}`, group: 'cp' });
    }
    const last = at.get(`${base}.cp${ctx.cp - 1}`);
    if (backward && last !== undefined) out.push({ op: 'send_recv', bytes: block, afterOp: last, neededBy: last + 1, label: 'CP ring key/value gradients, last step', group: 'cp' });
  }
  return out;
}
