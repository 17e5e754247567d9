/** Pipeline schedules: the order in which one stage runs forward and backward passes of micro-batches. */
export type PipelineSchedule = 'gpipe' | '1f1b' | 'interleaved';

/** One pass of one micro-batch through one model chunk on one stage. */
export interface PipeOp {
  kind: 'F' | 'B';
  microBatch: number;
  /** Model chunk on this stage (0 unless interleaved). */
  chunk: number;
}

/**
 * GPipe (Huang et al. 2019): all forwards, then all backwards, as Megatron runs it with
 * `num_warmup_microbatches = m` (backwards in micro-batch order).
 */
function gpipe(m: number): PipeOp[] {
  const ops: PipeOp[] = [];
  for (let i = 0; i < m; i++) ops.push({ kind: 'F', microBatch: i, chunk: 0 });
  for (let i = 0; i < m; i++) ops.push({ kind: 'B', microBatch: i, chunk: 0 });
  return ops;
}

/**
 * 1F1B / PipeDream-Flush (Narayanan et al. 2021; Megatron `forward_backward_pipelining_without_interleaving`):
 * stage s runs min(p − s − 1, m) warm-up forwards, then alternates one forward and one backward,
 * then drains the remaining backwards.
 */
function oneFOneB(p: number, s: number, m: number): PipeOp[] {
  const warmup = Math.min(p - s - 1, m);
  const ops: PipeOp[] = [];
  let f = 0;
  let b = 0;
  for (; f < warmup; f++) ops.push({ kind: 'F', microBatch: f, chunk: 0 });
  while (f < m) {
    ops.push({ kind: 'F', microBatch: f++, chunk: 0 });
    ops.push({ kind: 'B', microBatch: b++, chunk: 0 });
  }
  while (b < m) ops.push({ kind: 'B', microBatch: b++, chunk: 0 });
  return ops;
}

/**
 * Interleaved 1F1B (Narayanan et al., SC21 §2.2; Megatron `forward_backward_pipelining_with_interleaving`):
 * each stage holds v model chunks; micro-batches go through the chunks in groups of p. Forward k runs
 * chunk ⌊(k mod pv)/p⌋ on micro-batch ⌊k/pv⌋·p + k mod p; backward k runs the chunks in reverse.
 * Warm-up is (p − s − 1)·2 + (v − 1)·p forwards, at most every forward (Megatron-Core's `all_warmup_microbatches`).
 * Megatron-LM before November 2024 (NVIDIA/Megatron-LM 4295be1a) and its forks, Megatron-DeepSpeed among them, also
 * ran every forward first when m = p (`if num_microbatches == pipeline_parallel_size`): `allWarmupWhenOneGroup`.
 * That holds all m·v passes alive on every stage, where today's rule keeps the last stage at (v − 1)·p + 1.
 * Needs m to be a multiple of p.
 */
function interleaved(p: number, s: number, m: number, v: number, allWarmupWhenOneGroup: boolean): PipeOp[] {
  const total = m * v;
  const at = (k: number, backward: boolean): PipeOp => {
    const inGroup = k % (p * v);
    const c = Math.floor(inGroup / p);
    return {
      kind: backward ? 'B' : 'F',
      microBatch: Math.floor(k / (p * v)) * p + (k % p),
      chunk: backward ? v - 1 - c : c,
    };
  };
  const warmup = allWarmupWhenOneGroup && m === p ? total : Math.min((p - s - 1) * 2 + (v - 1) * p, total);
  const ops: PipeOp[] = [];
  let f = 0;
  let b = 0;
  for (; f < warmup; f++) ops.push(at(f, false));
  while (f < total) {
    ops.push(at(f++, false));
    ops.push(at(b++, true));
  }
  while (b < total) ops.push(at(b++, true));
  return ops;
}

/** How a framework's code runs a schedule, where frameworks differ. */
export interface ScheduleRules {
  /** The interleaved schedule runs every forward first when m = p (Megatron-LM before November 2024). */
  allWarmupWhenOneGroup?: boolean;
}

/** The op sequence of stage `s` of `p` for `m` micro-batches and `v` chunks per stage. */
/* eslint-disable-next-line max-params -- a schedule is fixed by its kind, pp, stage, micro-batches, chunks and the
 * framework's rules */
export function stageSchedule(
  schedule: PipelineSchedule,
  p: number,
  s: number,
  m: number,
  v = 1,
  rules: ScheduleRules = {},
): PipeOp[] {
  if (p === 1) return interleavedOrPlain(schedule, m, v);
  if (schedule === 'gpipe') return gpipe(m);
  if (schedule === '1f1b') return oneFOneB(p, s, m);
  return interleaved(p, s, m, v, rules.allWarmupWhenOneGroup ?? false);
}

/** Without a pipeline each micro-batch runs forward then backward (gradient accumulation). */
function interleavedOrPlain(_schedule: PipelineSchedule, m: number, v: number): PipeOp[] {
  const ops: PipeOp[] = [];
  for (let i = 0; i < m; i++) {
    for (let c = 0; c < v; c++) ops.push({ kind: 'F', microBatch: i, chunk: c });
    for (let c = v - 1; c >= 0; c--) ops.push({ kind: 'B', microBatch: i, chunk: c });
  }
  return ops;
}

/**
 * Most transformer layers whose forward activations are alive at once: the largest sum, over the schedule, of the
 * layers of the chunks whose forward has run and whose backward has not. With equal chunks, `peakInFlight` × their
 * layers; with an uneven interleaved split the passes in flight are not all of the largest chunk.
 */
export function peakLayersInFlight(ops: readonly PipeOp[], layersOfChunk: (chunk: number) => number): number {
  let live = 0;
  let peak = 0;
  for (const op of ops) {
    live += (op.kind === 'F' ? 1 : -1) * layersOfChunk(op.chunk);
    peak = Math.max(peak, live);
  }
  return peak;
}

/** Largest number of (micro-batch, chunk) forward passes whose backward has not run yet, over the schedule. */
export function peakInFlight(ops: readonly PipeOp[]): number {
  let live = 0;
  let peak = 0;
  for (const op of ops) {
    live += op.kind === 'F' ? 1 : -1;
    peak = Math.max(peak, live);
  }
  return peak;
}

/** A step of a stage's schedule: one pass, or a forward and a backward run together (combinedPass.ts). */
export type ScheduleUnit = { op: PipeOp } | { forward: PipeOp; backward: PipeOp };

/**
 * A stage's schedule as combined 1F1B pairs it (Megatron-Core's --overlap-moe-expert-parallel-comm): without a pipeline
 * each backward with the next micro-batch's forward (combined_1f1b_schedule_for_no_pipelining); over a pipeline each
 * steady-state forward with the backward after it, of another micro-batch. Warm-up forwards, cool-down backwards and
 * the passes of one micro-batch stay apart. Over a pipeline some pairs would wait on each other through the other
 * stages; combinedSchedule.ts splits those.
 */
export function combinedUnits(ops: readonly PipeOp[], pp: number): ScheduleUnit[] {
  const out: ScheduleUnit[] = [];
  for (let i = 0; i < ops.length; i++) {
    const [a, b] = [ops[i], ops[i + 1]];
    const pairs = b !== undefined && a.kind !== b.kind && a.microBatch !== b.microBatch;
    if (pairs && a.kind === (pp === 1 ? 'B' : 'F')) {
      out.push(a.kind === 'F' ? { forward: a, backward: b } : { forward: b, backward: a });
      i++;
    } else out.push({ op: a });
  }
  return out;
}
