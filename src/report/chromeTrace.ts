import { streamIndex, STREAMS, type StreamKind, type Task } from '../sim/program/types.js';
import type { Trace } from '../sim/program/trace.js';
import { simulatedRanks } from './ranks.js';

/** One event of the Chrome Trace Event Format (the JSON that chrome://tracing and ui.perfetto.dev load). */
export interface TraceEvent {
  name: string;
  /** `X`: a complete event with a duration; `M`: metadata (process and thread names, sort order). */
  ph: 'X' | 'M';
  pid: number;
  tid: number;
  /** Start, µs (the format's unit). */
  ts?: number;
  /** Duration, µs. */
  dur?: number;
  cat?: string;
  args?: Record<string, unknown>;
}

/** The JSON object form of the format, with what the file came from in `otherData`. */
export interface ChromeTrace {
  traceEvents: TraceEvent[];
  displayTimeUnit: 'ms' | 'ns';
  otherData: Record<string, string | number>;
}

/** What goes into a Chrome trace. */
export interface ChromeTraceInput {
  trace: Trace;
  /** Ranks to include (default: every simulated rank). */
  ranks?: readonly number[];
  gpusPerNode: number;
  /** Shown in `otherData`: scenario name, seed, version, … */
  meta?: Record<string, string | number>;
}

/** ns → µs, kept to whole nanoseconds so that the text stays short and exact. */
function us(ns: number): number {
  return Math.round(ns) / 1000;
}

/**
 * Process id of a rank. Perfetto treats pid 0 and tid 0 as the kernel's idle task ("swapper"), so ids
 * start at 1 (Perfetto maintainers' advice, google/perfetto#394); the process name carries the rank.
 */
export function processId(rank: number): number {
  return rank + 1;
}

/** Thread id of the `slot`-th track of a stream: stream index + 1, then extra tracks for overlapping spans. */
export function threadId(stream: StreamKind, slot: number): number {
  return slot === 0 ? streamIndex(stream) + 1 : 100 * (streamIndex(stream) + 1) + slot;
}

/**
 * Converts a simulated step to Trace Event Format: one process per rank (`rank 3 (node 0)`, pid 4), one thread
 * per stream (compute, comm, tp, pp, copy), and one complete event per task and rank it runs on (a
 * collective appears once on the thread of every rank in its group). Times are in µs from the step
 * start. Tasks outside stream order (pipeline sends) may overlap; viewers need the events of a thread
 * to nest, so overlapping ones go to extra threads of the same stream (`pp (2)`).
 */
export function toChromeTrace(input: ChromeTraceInput): ChromeTrace {
  const { trace } = input;
  const all = input.ranks ?? simulatedRanks(trace);
  const wanted = new Set(all);
  const byLane = new Map<string, Task[]>();
  for (const t of trace.program.tasks) {
    for (const r of t.ranks) {
      if (!wanted.has(r)) continue;
      const key = `${r}/${t.stream}`;
      let list = byLane.get(key);
      if (!list) byLane.set(key, (list = []));
      list.push(t);
    }
  }
  const meta: TraceEvent[] = [];
  const spans: TraceEvent[] = [];
  for (const rank of all) {
    const pid = processId(rank);
    meta.push({
      name: 'process_name',
      ph: 'M',
      pid,
      tid: 1,
      args: { name: `rank ${rank} (node ${Math.floor(rank / input.gpusPerNode)})` },
    });
    meta.push({ name: 'process_sort_index', ph: 'M', pid, tid: 1, args: { sort_index: rank } });
    for (const stream of STREAMS) {
      const tasks = byLane.get(`${rank}/${stream}`);
      if (!tasks) continue;
      tasks.sort((a, b) => trace.startNs[a.id] - trace.startNs[b.id] || trace.endNs[b.id] - trace.endNs[a.id]);
      // Greedy interval partitioning: the fewest tracks in which no two spans partly overlap.
      const slotEnds: number[] = [];
      for (const t of tasks) {
        const s = trace.startNs[t.id];
        const e = trace.endNs[t.id];
        let slot = slotEnds.findIndex((end) => end <= s);
        if (slot < 0) {
          slot = slotEnds.length;
          const tid = threadId(stream, slot);
          meta.push({
            name: 'thread_name',
            ph: 'M',
            pid,
            tid,
            args: { name: slot === 0 ? stream : `${stream} (${slot + 1})` },
          });
          meta.push({ name: 'thread_sort_index', ph: 'M', pid, tid, args: { sort_index: tid } });
          slotEnds.push(e);
        } else slotEnds[slot] = e;
        spans.push({
          name: t.label,
          cat: t.kind,
          ph: 'X',
          ts: us(s),
          dur: us(e - s),
          pid,
          tid: threadId(stream, slot),
          args: argsOf(t),
        });
      }
    }
  }
  return {
    traceEvents: [...meta, ...spans],
    displayTimeUnit: 'ms',
    otherData: { generator: 'clustersim', ...(input.meta ?? {}) },
  };
}

function argsOf(t: Task): Record<string, unknown> {
  const args: Record<string, unknown> = { task: t.id };
  if (t.microBatch >= 0) args.microBatch = t.microBatch;
  if (t.collective) {
    args.op = t.collective.op;
    args.bytes = t.collective.bytes;
    args.groupSize = t.collective.group.length;
  }
  return args;
}

/** The trace as a JSON string, one event per line (readable, and diffs well). */
export function chromeTraceJson(trace: ChromeTrace): string {
  const lines = trace.traceEvents.map((e) => JSON.stringify(e));
  return (
    `{"displayTimeUnit":${JSON.stringify(trace.displayTimeUnit)},"otherData":${JSON.stringify(trace.otherData)},` +
    `"traceEvents":[\n${lines.join(',\n')}\n]}\n`
  );
}
