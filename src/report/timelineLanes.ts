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
      index.get(`${r}/${t.stream}`)!.spans.push({ startNs: trace.startNs[t.id], endNs: trace.endNs[t.id], kind: t.kind, label: t.label, tasks: 1 });
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
 * `maxBars` bars (which bounds the file size): one pixel (`onePixelNs`) first, then twice as coarse,
 * and so on. Returns the merged lanes and the resolution used, ns.
 */
export function mergeLanes(lanes: readonly Lane[], onePixelNs: number, makespanNs: number, maxBars: number): { lanes: Lane[]; resolutionNs: number } {
  let resolutionNs = Math.max(onePixelNs, 1e-9);
  for (;;) {
    const merged = lanes.map((l) => ({ ...l, spans: mergeSpans(l.spans, resolutionNs) }));
    const bars = merged.reduce((a, l) => a + l.spans.length, 0);
    // At a resolution of the whole step a lane has at most two bars; coarser cannot help.
    if (bars <= maxBars || resolutionNs >= makespanNs) return { lanes: merged, resolutionNs };
    resolutionNs *= 2;
  }
}
