import { describe, expect, it } from 'vitest';
import { Program } from '../../src/sim/program/types.js';
import type { Trace } from '../../src/sim/program/trace.js';
import { chromeTraceJson, toChromeTrace, type TraceEvent } from '../../src/report/chromeTrace.js';
import { bertRun } from './fixtures.js';

/** Checks the fields the Trace Event Format requires of each event. */
function expectValidEvent(e: TraceEvent): void {
  expect(typeof e.name).toBe('string');
  expect(['X', 'M']).toContain(e.ph);
  expect(Number.isInteger(e.pid)).toBe(true);
  expect(Number.isInteger(e.tid)).toBe(true);
  if (e.ph === 'X') {
    expect(e.ts).toBeGreaterThanOrEqual(0);
    expect(e.dur).toBeGreaterThanOrEqual(0);
    expect(typeof e.cat).toBe('string');
  } else expect(e.args).toHaveProperty(e.name.endsWith('sort_index') ? 'sort_index' : 'name');
}

describe('Chrome / Perfetto trace', () => {
  const { run, scenario } = bertRun();
  const text = chromeTraceJson(toChromeTrace({ trace: run.trace, gpusPerNode: 8, meta: { scenario: scenario.name } }));
  const doc = JSON.parse(text) as {
    traceEvents: TraceEvent[];
    displayTimeUnit: string;
    otherData: Record<string, unknown>;
  };
  const spans = doc.traceEvents.filter((e) => e.ph === 'X');

  it('is valid JSON in the object form of the Trace Event Format', () => {
    expect(Array.isArray(doc.traceEvents)).toBe(true);
    expect(doc.displayTimeUnit).toBe('ms');
    expect(doc.otherData.scenario).toBe('bert-large-ddp-2node');
    for (const e of doc.traceEvents) expectValidEvent(e);
  });

  it('has one complete event per simulated task and rank (collectives once per member)', () => {
    const expected = run.trace.program.tasks.reduce((a, t) => a + t.ranks.length, 0);
    expect(spans.length).toBe(expected);
    const allReduces = run.trace.program.tasks.filter((t) => t.kind === 'dp-allreduce');
    expect(spans.filter((e) => e.cat === 'dp-allreduce').length).toBe(allReduces.length * 16);
  });

  it('names one process per rank and one thread per stream used, avoiding the ids Perfetto reserves (0)', () => {
    const procs = doc.traceEvents.filter((e) => e.name === 'process_name');
    expect(procs.map((e) => e.pid)).toEqual([...Array(16).keys()].map((r) => r + 1));
    expect(procs[8].args!.name).toBe('rank 8 (node 1)');
    expect(doc.traceEvents.every((e) => e.pid > 0 && e.tid > 0)).toBe(true);
    const threads = doc.traceEvents.filter((e) => e.name === 'thread_name' && e.pid === 1).map((e) => e.args!.name);
    expect(threads).toEqual(['compute', 'comm']);
  });

  it('gives times in microseconds from the step start', () => {
    const end = Math.max(...spans.map((e) => e.ts! + e.dur!));
    expect(end).toBeCloseTo(run.trace.makespanNs / 1000, 2);
    const t = run.trace.program.tasks[0];
    const e = spans.find((x) => x.args!.task === t.id)!;
    expect(e.ts).toBeCloseTo(run.trace.startNs[t.id] / 1000, 3);
    expect(e.dur).toBeCloseTo((run.trace.endNs[t.id] - run.trace.startNs[t.id]) / 1000, 3);
  });

  it('keeps only the ranks asked for', () => {
    const some = toChromeTrace({ trace: run.trace, ranks: [0, 8], gpusPerNode: 8 });
    expect(new Set(some.traceEvents.map((e) => e.pid))).toEqual(new Set([1, 9]));
    expect(some.traceEvents.filter((e) => e.ph === 'X').length).toBe(
      run.trace.program.tasks.filter((t) => t.ranks.includes(0)).length * 2,
    );
  });

  it('puts overlapping spans of one stream on separate threads so that every thread nests', () => {
    const program = new Program(1);
    for (let i = 0; i < 3; i++) program.local(0, 'comm', 'pp-send', `send ${i}`, 10);
    const trace: Trace = {
      program,
      startNs: Float64Array.from([0, 5, 20]),
      endNs: Float64Array.from([10, 15, 30]),
      makespanNs: 30,
    };
    const events = toChromeTrace({ trace, gpusPerNode: 8 }).traceEvents;
    const x = events.filter((e) => e.ph === 'X');
    expect(x.map((e) => e.tid)).toEqual([2, 201, 2]);
    expect(events.filter((e) => e.name === 'thread_name').map((e) => e.args!.name)).toEqual(['comm', 'comm (2)']);
  });

  it('holds only the simulated ranks by default when the simulator mirrors the others', () => {
    const program = new Program(16, [0]);
    program.local(0, 'compute', 'forward', 'fwd', 10);
    const trace: Trace = { program, startNs: Float64Array.from([0]), endNs: Float64Array.from([10]), makespanNs: 10 };
    const events = toChromeTrace({ trace, gpusPerNode: 8 }).traceEvents;
    expect(new Set(events.map((e) => e.pid))).toEqual(new Set([1]));
  });
});
