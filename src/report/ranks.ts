import { STREAMS, streamIndex, type StreamKind } from '../sim/program/types.js';
import type { Trace } from '../sim/program/trace.js';

/** A rank list that cannot be read or names ranks that do not exist; the CLI reports it as bad usage. */
export class RankSelectionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RankSelectionError';
  }
}

/**
 * The ranks whose work the trace holds: all of them, or (when the simulator ran in a reduced mode that
 * simulates one representative of ranks that behave alike) `program.simulatedRanks`.
 */
export function simulatedRanks(trace: Trace): readonly number[] {
  const p = trace.program as { rankCount: number; simulatedRanks?: readonly number[] };
  return p.simulatedRanks ?? Array.from({ length: p.rankCount }, (_, r) => r);
}

/** Sorted ranks written compactly with ranges: `0-7,16,18-19`. */
export function compactRanks(ranks: readonly number[]): string {
  const sorted = [...ranks].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length;) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) j++;
    parts.push(j > i ? `${sorted[i]}-${sorted[j]}` : `${sorted[i]}`);
    i = j + 1;
  }
  return parts.join(',');
}

/** A rank that exists but whose work was not simulated (it mirrors a simulated one). */
export class RankNotSimulatedError extends RankSelectionError {
  constructor(
    readonly rank: number,
    readonly simulated: readonly number[],
  ) {
    super(
      `rank ${rank} was not simulated: this run simulated ranks ${compactRanks(simulated)}, and the others mirror them`,
    );
    this.name = 'RankNotSimulatedError';
  }
}

/**
 * Reads a rank list such as `0-15`, `0,8,120` or `0-3,64-67` into sorted, distinct ranks, each of
 * which must be below `rankCount` and, when `simulated` is given, among the simulated ranks.
 */
export function parseRankList(text: string, rankCount: number, simulated?: readonly number[]): number[] {
  const out = new Set<number>();
  for (const part of text.split(',').map((p) => p.trim())) {
    const m = /^(\d+)(?:\s*-\s*(\d+))?$/.exec(part);
    if (!m) throw new RankSelectionError(`'${part}' is not a rank or a range; write e.g. 0-15 or 0,8,120`);
    const a = Number(m[1]);
    const b = m[2] === undefined ? a : Number(m[2]);
    if (b < a) throw new RankSelectionError(`range '${part}' runs backwards; write ${b}-${a}`);
    if (b >= rankCount) throw new RankSelectionError(`rank ${b} does not exist: this run has ranks 0-${rankCount - 1}`);
    for (let r = a; r <= b; r++) out.add(r);
  }
  if (simulated) {
    const ok = new Set(simulated);
    for (const r of out) if (!ok.has(r)) throw new RankNotSimulatedError(r, simulated);
  }
  return [...out].sort((x, y) => x - y);
}

/** Reads a stream list (`compute,comm`) into streams in their usual order. */
export function parseStreamList(text: string): StreamKind[] {
  const asked = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  for (const s of asked) {
    if (!(STREAMS as readonly string[]).includes(s))
      throw new RankSelectionError(`unknown stream '${s}'; expected some of: ${STREAMS.join(', ')}`);
  }
  if (asked.length === 0) throw new RankSelectionError(`name at least one stream of: ${STREAMS.join(', ')}`);
  return STREAMS.filter((s) => asked.includes(s));
}

/** Streams on which the program runs any task: empty streams (copy, in a plain DDP step) get no lane. */
export function usedStreams(trace: Trace): StreamKind[] {
  const used = new Set<StreamKind>();
  for (const t of trace.program.tasks) used.add(t.stream);
  return STREAMS.filter((s) => used.has(s));
}

/** Compute-stream busy time per rank, ns: how long each rank computes (stragglers compute longest). */
export function computeBusyNs(trace: Trace): Float64Array {
  const busy = new Float64Array(trace.program.rankCount);
  for (const t of trace.program.tasks) {
    if (streamIndex(t.stream) !== 0) continue;
    const d = trace.endNs[t.id] - trace.startNs[t.id];
    for (const r of t.ranks) busy[r] += d;
  }
  return busy;
}

/** What the default rank choice looks at. */
export interface RankChoiceInput {
  trace: Trace;
  gpusPerNode: number;
  /** Ranks of each pipeline stage, when the step has a pipeline; one rank of each is shown. */
  stages?: readonly (readonly number[])[];
}

/**
 * The ranks a timeline shows when the user names none, among the simulated ranks: the first (rank 0);
 * the first rank of every pipeline stage; the slowest rank (most compute time, so a straggler shows
 * up); and the first rank of the farthest node from it (the last node, across the network), if any.
 */
export function defaultRanks(input: RankChoiceInput): number[] {
  const sim = [...simulatedRanks(input.trace)].sort((a, b) => a - b);
  if (sim.length === 0) return [];
  const ok = new Set(sim);
  const chosen = new Set<number>([sim[0]]);
  for (const stage of input.stages ?? []) if (stage.length > 0 && ok.has(stage[0])) chosen.add(stage[0]);
  const busy = computeBusyNs(input.trace);
  let slowest = sim[0];
  for (const r of sim) if (busy[r] > busy[slowest]) slowest = r;
  chosen.add(slowest);
  const nodeOf = (r: number) => Math.floor(r / input.gpusPerNode);
  const far = sim.filter((r) => nodeOf(r) === nodeOf(sim[sim.length - 1]))[0];
  if (nodeOf(far) !== nodeOf(sim[0])) chosen.add(far);
  return [...chosen].sort((a, b) => a - b);
}

/**
 * The first rank of each pipeline stage, from the parallel grid of a resolved scenario (read loosely, so
 * that scenarios without pipeline fields give none). Ranks are numbered as Megatron does: with placement
 * `tp-dp-pp` (the default) rank = (p·dp + d)·tp + t; with `tp-pp-dp` rank = (d·pp + p)·tp + t; d counts dp × cp ranks.
 */
export function pipelineStageRanks(parallel: {
  dp: number;
  tp?: unknown;
  pp?: unknown;
  cp?: unknown;
  placement?: unknown;
}): number[][] {
  const tp = typeof parallel.tp === 'number' ? parallel.tp : 1;
  const pp = typeof parallel.pp === 'number' ? parallel.pp : 1;
  // Context-parallel ranks come right after tp in either order (ParallelLayout).
  const cp = typeof parallel.cp === 'number' ? parallel.cp : 1;
  if (pp <= 1) return [];
  const stageStart = (p: number) => (parallel.placement === 'tp-pp-dp' ? p * cp * tp : p * parallel.dp * cp * tp);
  return Array.from({ length: pp }, (_, p) => [stageStart(p)]);
}
