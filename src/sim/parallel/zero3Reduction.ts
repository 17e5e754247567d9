import type { Block } from '../workload/ops.js';
import type { PassRecord } from './stepTypes.js';
import type { ReductionGroup } from './reductionGroup.js';
import { blockZero3Collectives, type BlockZero3Collectives, type DeepSpeedZero3 } from './zero3Collectives.js';

/** A block's k-th of n collectives of one kind, as the timeline names it (the part only when there are several). */
function partLabel(what: string, block: string, k: number, n: number, mb: number): string {
  return n === 1 ? `${what} ${block} mb${mb}` : `${what} ${block} (${k + 1}/${n}) mb${mb}`;
}

/** Where the ZeRO-3 collectives of one group stand as they are issued pass after pass. */
interface Zero3Cursor {
  g: ReductionGroup;
  overlap: boolean;
  collectivesOf: (block: Block) => BlockZero3Collectives;
  bytes: { weight: number; gradient: number };
  /** The last communication task. */
  last: number;
  /** Without overlap: the compute tasks before the next gather (the previous pass's last). */
  before: number[];
  /** Without overlap: the reduction the next block waits for. */
  pendingReduction: number;
}

/**
 * ZeRO-3: before each block's forward and backward its weights are all-gathered over the DP group, one block ahead
 * (the gathers for block i + 1 are queued before block i's gradient reduce-scatters and may start once block i has
 * started); after a block's backward its gradients are reduce-scattered. FSDP makes one collective of each a block,
 * DeepSpeed one a parameter group and one a reduce bucket (`blockZero3Collectives`, zero3Collectives.ts), one after
 * another on the comm stream. Pipeline parallelism is excluded (pp = 1), so all passes belong to virtual stage 0.
 * Without `overlap` (overlap_comm false) DeepSpeed issues the gathers and the reductions on the compute stream
 * (parameter_offload.py `__allgather_stream`, stage3.py `reduce_and_partition_stream`: the default stream unless
 * overlap_comm): a block's gather waits for the block before it, and the next block waits for both.
 * Returns the last communication task.
 */
export function addZero3(g: ReductionGroup, overlap: boolean, deepspeed: DeepSpeedZero3 | undefined): number {
  const { ctx, passes, key } = g.scope;
  const all = new Map(g.params.tensors.map((x) => [x.name, x]));
  const ofBlock = new Map<Block, BlockZero3Collectives>();
  const collectivesOf = (block: Block) => {
    let c = ofBlock.get(block);
    if (!c) ofBlock.set(block, (c = blockZero3Collectives(block, ctx.tp, all, deepspeed)));
    return c;
  };
  const bytes = { weight: ctx.precision.elementBytes, gradient: ctx.precision.wireGradientBytes };
  const cursor: Zero3Cursor = { g, overlap, collectivesOf, bytes, last: -1, before: [], pendingReduction: -1 };
  for (let mb = 0; mb < ctx.microBatches; mb++) {
    for (const kind of ['F', 'B'] as const)
      addPassCollectives(
        cursor,
        g.replicas.map((d) => passes.get(key(d, 0, mb, kind))!),
        { mb, kind },
      );
  }
  return cursor.last;
}

/** The gathers (and, in a backward, the reductions) of one pass on every simulated replica (`recs`). */
function addPassCollectives(cursor: Zero3Cursor, recs: PassRecord[], pass: { mb: number; kind: 'F' | 'B' }): void {
  const { g, overlap, collectivesOf } = cursor;
  const { program } = g.scope;
  const { t } = g;
  const blocks = recs[0].blocks;
  const gathered = new Set<number>();
  const gather = (i: number) => {
    if (i >= blocks.length || gathered.has(i)) return;
    gathered.add(i);
    gatherBlock(cursor, recs, i, pass.mb);
  };
  for (let i = 0; i < blocks.length; i++) {
    gather(i);
    if (overlap) gather(i + 1);
    else if (cursor.pendingReduction >= 0)
      for (const r of recs) program.addDep(r.blocks[i].first[t], cursor.pendingReduction);
    cursor.pendingReduction = -1;
    const { reductions } = collectivesOf(blocks[i].block);
    if (pass.kind === 'B' && reductions.length > 0) reduceBlock(cursor, recs, i, pass.mb);
  }
  cursor.before = recs.map((r) => r.blocks[blocks.length - 1].last[t]);
}

/**
 * The weight all-gathers of block i: after the block before it (without overlap), or once it has started (with
 * overlap: one block ahead). They follow one another on the comm stream; the block waits for the last.
 */
function gatherBlock(cursor: Zero3Cursor, recs: PassRecord[], i: number, mb: number): void {
  const { g, overlap } = cursor;
  const { program } = g.scope;
  const { t } = g;
  const block = recs[0].blocks[i].block;
  const { gathers } = cursor.collectivesOf(block);
  if (gathers.length === 0) return;
  const previous = (pick: 'first' | 'last') => recs.map((r) => r.blocks[i - 1][pick][t]);
  const deps = !overlap ? (i > 0 ? previous('last') : cursor.before) : i > 0 ? previous('first') : [];
  for (const [k, elements] of gathers.entries()) {
    const label = partLabel('all-gather weights', block.name, k, gathers.length, mb);
    const call = {
      op: 'all_gather' as const,
      group: g.group,
      bytes: elements * cursor.bytes.weight,
      shadowGroups: g.shadowGroups,
    };
    cursor.last = program.collective('zero-gather', label, call, k === 0 ? deps : [cursor.last], mb, 'comm', g.members);
  }
  for (const r of recs) program.addDep(r.blocks[i].first[t], cursor.last);
}

/** The gradient reduce-scatters of block i, after its backward, one after another; the next block waits for them. */
function reduceBlock(cursor: Zero3Cursor, recs: PassRecord[], i: number, mb: number): void {
  const { g } = cursor;
  const block = recs[0].blocks[i].block;
  const { reductions } = cursor.collectivesOf(block);
  for (const [k, elements] of reductions.entries()) {
    const label = partLabel('reduce-scatter gradients', block.name, k, reductions.length, mb);
    const call = {
      op: 'reduce_scatter' as const,
      group: g.group,
      bytes: elements * cursor.bytes.gradient,
      shadowGroups: g.shadowGroups,
    };
    const deps = k === 0 ? recs.map((r) => r.blocks[i].last[g.t]) : [cursor.last];
    cursor.last = g.scope.program.collective('dp-reducescatter', label, call, deps, mb, 'comm', g.members);
  }
  cursor.pendingReduction = cursor.last;
}
