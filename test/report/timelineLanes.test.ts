import { describe, expect, it } from 'vitest';
import { mergeLanes, mergeSpans, type Lane, type LaneSpan } from '../../src/report/timelineLanes.js';

const span = (startNs: number, endNs: number, kind = 'forward'): LaneSpan => ({
  startNs,
  endNs,
  kind,
  label: kind,
  tasks: 1,
});

describe('merging timeline spans', () => {
  it('keeps spans longer than the resolution as they are', () => {
    const spans = [span(0, 100), span(100, 250, 'backward'), span(400, 600)];
    expect(mergeSpans(spans, 10)).toEqual(spans);
  });

  it('merges runs of spans shorter than the resolution into one bar of the dominant kind', () => {
    const spans = [span(0, 3), span(3, 5, 'backward'), span(5, 8), span(8, 9, 'backward')];
    const out = mergeSpans(spans, 10);
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({ startNs: 0, endNs: 9, kind: 'forward', tasks: 4 });
  });

  it('keeps each kind drawn for about its own time when a long run of short tasks changes kind', () => {
    // 1,000 forward tasks then 2,000 backward ones, each 3 ns, back to back: a step of 10 ns cannot show one task,
    // but at 10 ns per step the forward third of the run must still be drawn as forward.
    const spans: LaneSpan[] = [];
    for (let i = 0; i < 3000; i++) spans.push(span(3 * i, 3 * i + 3, i < 1000 ? 'forward' : 'backward'));
    const res = 10;
    const out = mergeSpans(spans, res);
    const drawn = (kind: string) => out.filter((b) => b.kind === kind).reduce((a, b) => a + b.endNs - b.startNs, 0);
    expect(Math.abs(drawn('forward') - 3000)).toBeLessThanOrEqual(2 * res);
    expect(Math.abs(drawn('backward') - 6000)).toBeLessThanOrEqual(2 * res);
    expect(out.length).toBeLessThanOrEqual(9000 / res + 1);
  });

  it('does not merge across a gap longer than the resolution', () => {
    expect(mergeSpans([span(0, 2), span(50, 52)], 10)).toHaveLength(2);
  });

  it('never leaves more than makespan / resolution + 1 bars, whatever the tasks', () => {
    const spans: LaneSpan[] = [];
    let t = 0;
    for (let i = 0; i < 20_000; i++) {
      const d = 1 + ((i * 7919) % 13);
      spans.push(span(t, t + d, i % 3 ? 'forward' : 'dp-allreduce'));
      t += d + ((i * 31) % 5);
    }
    const res = 50;
    const out = mergeSpans(spans, res);
    expect(out.length).toBeLessThanOrEqual(t / res + 1);
    expect(out.reduce((a, s) => a + s.tasks, 0)).toBe(spans.length);
  });

  it('merges at one pixel when that is under the bar budget, and coarser only as far as needed', () => {
    // Two lanes of 100 bars 30 ns long with 20 ns gaps over 5 µs.
    const lane = (rank: number): Lane => ({
      rank,
      stream: 'compute',
      spans: Array.from({ length: 100 }, (_, i) => span(i * 50, i * 50 + 30)),
    });
    const fine = mergeLanes([lane(0), lane(1)], 5, 5000, 1000);
    expect(fine.resolutionNs).toBe(5);
    expect(fine.lanes.map((l) => l.spans.length)).toEqual([100, 100]);
    const coarse = mergeLanes([lane(0), lane(1)], 5, 5000, 150);
    expect(coarse.resolutionNs).toBe(40);
    expect(coarse.lanes.reduce((a, l) => a + l.spans.length, 0)).toBeLessThanOrEqual(150);
  });
});
