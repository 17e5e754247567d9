import type { StreamKind } from '../sim/program/types.js';
import type { Trace } from '../sim/program/trace.js';

/** One drawn bar: one task, or several consecutive tasks merged because they are too short to tell apart. */
export interface LaneSpan {
  startNs: number;
  endNs: number;
  /** The kind that takes the most time inside the bar. */
  kind: string;
  /** The task's label, or a summary of the merged tasks. */
  label: string;
  /** How many tasks the bar stands for. */
  tasks: number;
  /**
   * A merged bar's time by kind, most first (at most `MIX_KINDS`; the rest is counted with the last shown), ns: the
   * bar is drawn as a stack of them over the bar's length, so that short forwards between long backwards still show,
   * and the time between the merged tasks stays visible as idle.
   */
  mix?: { kind: string; ns: number }[];
}

/** The most kinds a merged bar's stack shows. */
export const MIX_KINDS = 3;

/** A merged bar's time by kind, most first, the kinds past `MIX_KINDS` counted with the last shown. */
function mixOf(timeByKind: ReadonlyMap<string, number>): { kind: string; ns: number }[] {
  const all = [...timeByKind]
    .map(([kind, ns]) => ({ kind, ns }))
    .sort((a, b) => b.ns - a.ns || (a.kind < b.kind ? -1 : 1));
  const shown = all.slice(0, MIX_KINDS);
  for (const rest of all.slice(MIX_KINDS)) shown[shown.length - 1].ns += rest.ns;
  return shown;
}

/** The spans of one rank on one stream, in time order. */
export interface Lane {
  rank: number;
  stream: StreamKind;
  spans: LaneSpan[];
}

/** Spans of the chosen ranks and streams, one lane per (rank, stream) in rank-major order, unmerged. */
export function collectLanes(trace: Trace, ranks: readonly number[], streams: readonly StreamKind[]): Lane[] {
  const lanes: Lane[] = [];
  const index = new Map<string, Lane>();
  for (const rank of ranks) {
    for (const stream of streams) {
      const lane: Lane = { rank, stream, spans: [] };
      lanes.push(lane);
      index.set(`${rank}/${stream}`, lane);
    }
  }
  const wanted = new Set(ranks);
  for (const t of trace.program.tasks) {
    if (!streams.includes(t.stream)) continue;
    for (const r of t.ranks) {
      if (!wanted.has(r)) continue;
      index
        .get(`${r}/${t.stream}`)!
        .spans.push({ startNs: trace.startNs[t.id], endNs: trace.endNs[t.id], kind: t.kind, label: t.label, tasks: 1 });
    }
  }
  for (const lane of lanes) lane.spans.sort((a, b) => a.startNs - b.startNs || a.endNs - b.endNs);
  return lanes;
}

/**
 * Merges spans that cannot be told apart at resolution `resolutionNs` (one pixel or more): a span
 * joins the bar before it when the gap between them is at most one resolution step and that bar is
 * still shorter than a step. The merged bar takes the kind with the most time in it; spans long
 * enough to see keep their own bar (and tooltip). A bar stops growing once it is a step long, so a run
 * of short tasks of several kinds (forward layers, then backward ones, with TP collectives between)
 * becomes a row of step-wide bars, each of its own dominant kind, not one bar of one kind over the run.
 *
 * Every bar that comes out is then either at least one step long or followed by a gap longer than a
 * step, so a lane holds at most makespan / resolution + 1 bars, whatever the number of tasks.
 */
export function mergeSpans(spans: readonly LaneSpan[], resolutionNs: number): LaneSpan[] {
  const out: LaneSpan[] = [];
  let cur: LaneSpan | undefined;
  let timeByKind = new Map<string, number>();
  let firstLabel = '';
  let lastLabel = '';
  const flush = () => {
    if (!cur) return;
    if (cur.tasks > 1) {
      let best = cur.kind;
      let bestNs = -1;
      for (const [k, ns] of timeByKind) if (ns > bestNs) [best, bestNs] = [k, ns];
      cur.kind = best;
      cur.label = `${firstLabel} … ${lastLabel} (${cur.tasks} tasks, mostly ${best})`;
      cur.mix = mixOf(timeByKind);
    }
    out.push(cur);
  };
  for (const s of spans) {
    const dur = s.endNs - s.startNs;
    if (cur && s.startNs - cur.endNs <= resolutionNs && cur.endNs - cur.startNs < resolutionNs) {
      cur.endNs = Math.max(cur.endNs, s.endNs);
      cur.tasks += s.tasks;
      timeByKind.set(s.kind, (timeByKind.get(s.kind) ?? 0) + dur);
      lastLabel = s.label;
      continue;
    }
    flush();
    cur = { ...s };
    firstLabel = s.label;
    lastLabel = s.label;
    timeByKind = new Map([[s.kind, dur]]);
  }
  flush();
  return out;
}

/**
 * Merges the spans of every lane at the finest resolution that keeps all lanes together under
 * `maxBars` rects (a merged bar's stack counting one a kind; which bounds the file size): one pixel (`onePixelNs`)
 * first, then twice as coarse, and so on. Returns the merged lanes and the resolution used, ns.
 */
export function mergeLanes(
  lanes: readonly Lane[],
  onePixelNs: number,
  makespanNs: number,
  maxBars: number,
): { lanes: Lane[]; resolutionNs: number } {
  let resolutionNs = Math.max(onePixelNs, 1e-9);
  for (;;) {
    const merged = lanes.map((l) => ({ ...l, spans: mergeSpans(l.spans, resolutionNs) }));
    // What is drawn: one rect a task, one a kind of a merged bar's stack.
    const bars = merged.reduce((a, l) => a + l.spans.reduce((n, s) => n + (s.mix?.length ?? 1), 0), 0);
    // At a resolution of the whole step a lane has at most two bars; coarser cannot help.
    if (bars <= maxBars || resolutionNs >= makespanNs) return { lanes: merged, resolutionNs };
    resolutionNs *= 2;
  }
}
