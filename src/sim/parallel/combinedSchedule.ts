import { scheduleRules } from '../workload/framework.js';
import { combinedUnits, stageSchedule, type PipeOp, type ScheduleUnit } from './schedules.js';
import type { StepContext } from './stepContext.js';

/**
 * Combined 1F1B over a pipeline (combinedPass.ts): each stage's steady-state forward with the backward after it, of
 * another micro-batch, as combinedUnits pairs them, minus the pairs that would make the stages wait on each other for
 * ever. A combined step cannot finish before both its passes have their inputs (their segments take turns on one
 * in-order stream), and what either pass sends is counted as sent at the step's end; with that rule the pairs are
 * checked stage against stage, and while some step can never start, the earliest such pair runs as two passes again.
 * The result never deadlocks: the real program waits for no more than this rule says.
 */
export function deadlockFreeUnits(schedules: readonly PipeOp[][], pp: number, virtualStages: number): ScheduleUnit[][] {
  const units = schedules.map((ops) => combinedUnits(ops, pp));
  for (;;) {
    const stuck = firstStuckPair(units, pp, virtualStages);
    if (!stuck) return units;
    const [s, i] = stuck;
    const pair = units[s][i] as { forward: PipeOp; backward: PipeOp };
    units[s].splice(i, 1, { op: pair.forward }, { op: pair.backward });
  }
}

/** The passes of a unit. */
function passesOf(u: ScheduleUnit): PipeOp[] {
  return 'op' in u ? [u.op] : [u.forward, u.backward];
}

/** The (stage, index) of the earliest combined step that can never start, or undefined when every step can. */
function firstStuckPair(units: ScheduleUnit[][], pp: number, virtualStages: number): [number, number] | undefined {
  const doneAt = new Map<string, true>();
  const key = (kind: 'F' | 'B', vs: number, mb: number) => `${kind}/${vs}/${mb}`;
  const next = units.map(() => 0);
  const ready = (op: PipeOp, s: number) => {
    const vs = op.chunk * pp + s;
    if (op.kind === 'F') return vs === 0 || doneAt.has(key('F', vs - 1, op.microBatch));
    return (
      doneAt.has(key('F', vs, op.microBatch)) &&
      (vs === virtualStages - 1 || doneAt.has(key('B', vs + 1, op.microBatch)))
    );
  };
  for (let progressed = true; progressed;) {
    progressed = false;
    units.forEach((list, s) => {
      while (next[s] < list.length && passesOf(list[next[s]]).every((op) => ready(op, s))) {
        for (const op of passesOf(list[next[s]])) doneAt.set(key(op.kind, op.chunk * pp + s, op.microBatch), true);
        next[s]++;
        progressed = true;
      }
    });
  }
  // A stage stuck at a combined step is what holds the rest up; the earliest such step is split first.
  let first: [number, number] | undefined;
  units.forEach((list, s) => {
    const i = next[s];
    if (i < list.length && !('op' in list[i]) && (!first || i < first[1])) first = [s, i];
  });
  return first;
}

/** Stage s's schedule: its passes in order (schedules.ts), under the framework's rules. */
export function stageOps(ctx: StepContext, s: number): PipeOp[] {
  const par = ctx.setup.parallel;
  return stageSchedule(
    par.schedule,
    ctx.pp,
    s,
    ctx.microBatches,
    ctx.chunksPerStage,
    scheduleRules(ctx.setup.framework),
  );
}

/** Every stage's steps: combined where the step runs combined 1F1B (parallel.moeOverlap), else one pass each. */
export function stageUnits(ctx: StepContext): ScheduleUnit[][] {
  const schedules = Array.from({ length: ctx.pp }, (_, s) => stageOps(ctx, s));
  return ctx.setup.parallel.moeOverlap
    ? deadlockFreeUnits(schedules, ctx.pp, ctx.pp * ctx.chunksPerStage)
    : schedules.map((ops) => ops.map((op) => ({ op })));
}

/** The passes of a stage's steps in the order their activations are made and freed (a step's forward first). */
export function unitOrder(units: readonly ScheduleUnit[]): PipeOp[] {
  return units.flatMap(passesOf);
}
