import type { Block } from '../workload/ops.js';
import type { BlockRun, PassBuilder } from './passBuilder.js';
import type { PipeOp } from './schedules.js';
import type { PassRecord, PassTemplates } from './stepTypes.js';

/** One of the two passes of a combined step: its op, blocks in the order it runs them, and its record. */
export interface CombinedSide {
  op: PipeOp;
  blocks: Block[];
  rec: PassRecord;
  /** Host work after the pass's start wait, on its first block (passStart.ts). */
  startHostNs?: number;
}

/** How far one side has come: its next block, the block it is inside, what its next block waits for. */
interface SideState extends CombinedSide {
  index: number;
  run?: BlockRun;
  carry: number[];
}

/**
 * Megatron-Core's combined 1F1B (`--overlap-moe-expert-parallel-comm`; model_chunk_schedule_plan.py): the forward of
 * one micro-batch and the backward of another run as one step, layer against layer, so that each pass's expert
 * all-to-alls are in flight while the other pass computes. The backward goes first; each side adds its blocks until
 * it has issued an exchange its next segment must wait for, then the other side takes over: backward combine
 * gradient | forward attention, router and permute | backward experts | forward dispatch | … as the schedule plan
 * orders them, the exchanges on the TP stream. A side with no exchange left runs to its end.
 */
export function addCombinedPasses(
  builder: PassBuilder,
  templates: PassTemplates,
  backward: CombinedSide,
  forward: CombinedSide,
): void {
  const start = builder.pendingTp;
  const sides: SideState[] = [backward, forward].map((side) => ({ ...side, index: 0, carry: start }));
  let turn = 0;
  while (sides.some((s) => !done(s))) {
    const side = sides[turn];
    if (!done(side)) advance(builder, templates, side);
    turn = 1 - turn;
  }
  builder.pendingTp = [...new Set([...sides[0].carry, ...sides[1].carry])];
}

function done(side: SideState): boolean {
  return side.run === undefined && side.index >= side.blocks.length;
}

/** Adds `side`'s blocks until it waits for an exchange it just issued, or has none left. */
function advance(builder: PassBuilder, templates: PassTemplates, side: SideState): void {
  for (;;) {
    if (!side.run) {
      if (side.index >= side.blocks.length) return;
      const block = side.blocks[side.index];
      const part = { block, t: templates.get(block)![side.op.kind], op: side.op, rec: side.rec };
      side.run = builder.startBlock(
        side.index === 0 && side.startHostNs !== undefined ? { ...part, startHostNs: side.startHostNs } : part,
        side.carry,
      );
    }
    if (!builder.runBlock(side.run, true)) return;
    side.carry = builder.finishBlock(side.run);
    side.run = undefined;
    side.index++;
  }
}
