import { describe, expect, it } from 'vitest';
import { Program } from '../../src/sim/program/types.js';
import type { Trace } from '../../src/sim/program/trace.js';
import { renderTimeline } from '../../src/report/timeline.js';
import { kindClass } from '../../src/report/kinds.js';
import { usedStreams } from '../../src/report/ranks.js';
import { bertRun, num, parseSvg } from './fixtures.js';

describe('SVG timeline', () => {
  const { run, label } = bertRun();
  const svg = renderTimeline({
    trace: run.trace,
    result: run.result,
    label,
    ranks: [0, 8],
    streams: ['compute', 'comm'],
  });
  const root = parseSvg(svg);

  it('is a well-formed standalone SVG document', () => {
    expect(root.tagName).toBe('svg');
    expect(root.getAttribute('xmlns')).toBe('http://www.w3.org/2000/svg');
    expect(num(root, 'width')).toBeGreaterThan(0);
    expect(num(root, 'height')).toBeGreaterThan(0);
  });

  it('has one lane per rank and stream asked for, in rank-major order', () => {
    const lanes = [...root.querySelectorAll('g.lane')].map(
      (g) => `${g.getAttribute('data-rank')}/${g.getAttribute('data-stream')}`,
    );
    expect(lanes).toEqual(['0/compute', '0/comm', '8/compute', '8/comm']);
    expect(root.getAttribute('data-lanes')).toBe('4');
  });

  it('draws every bar inside the time axis range', () => {
    const x0 = num(root, 'data-plot-x0');
    const x1 = num(root, 'data-plot-x1');
    const bars = [...root.querySelectorAll('rect.span')];
    expect(bars.length).toBeGreaterThan(10);
    for (const b of bars) {
      expect(num(b, 'x')).toBeGreaterThanOrEqual(x0);
      expect(num(b, 'x') + num(b, 'width')).toBeLessThanOrEqual(x1 + 0.11);
      expect(num(b, 'width')).toBeGreaterThan(0);
    }
  });

  it('has a legend entry for each kind present (and idle), and none for kinds absent', () => {
    const present = new Set(
      run.trace.program.tasks.filter((t) => t.ranks.includes(0) || t.ranks.includes(8)).map((t) => t.kind),
    );
    const legend = [...root.querySelectorAll('g.legend-item')].map((g) => g.getAttribute('data-kind'));
    expect(new Set(legend)).toEqual(new Set([...present, 'idle']));
    for (const k of present) expect(root.querySelector(`rect.span.${kindClass(k)}`)).not.toBeNull();
  });

  it('has a time axis in a readable unit and a title with the scenario and its key figures', () => {
    expect(root.querySelector('.axis')!.textContent).toContain('time since the step started (ms)');
    const ticks = [...root.querySelectorAll('.axis .tick text')].map((t) => Number(t.textContent));
    expect(ticks[0]).toBe(0);
    expect(Math.max(...ticks)).toBeLessThanOrEqual(run.result.stepTimeS * 1e3);
    expect(root.querySelector('.title')!.textContent).toContain('bert-large-ddp-2node');
    expect(root.querySelector('.subtitle')!.textContent).toMatch(/samples\/s.*MFU.*memory/);
  });

  it('shows idle on compute lanes as a hatched background', () => {
    const bg = root.querySelector('g.lane[data-stream="compute"] rect.lane-bg')!;
    expect(bg.getAttribute('fill')).toBe('url(#tl-idle)');
    expect(root.querySelector('pattern#tl-idle')).not.toBeNull();
  });

  it('only lists streams that have work by default', () => {
    expect(usedStreams(run.trace)).toEqual(['compute', 'comm']);
  });

  it('stays under 2 MB for a dense trace by merging short tasks', () => {
    // 64 ranks × 5 streams × 2,000 tasks with long labels, of every length from 1 ns to 100 µs:
    // far more tasks than pixels, and bars wide enough to carry tooltips.
    const ranks = 64;
    const perLane = 2000;
    const program = new Program(ranks);
    const kinds = ['forward', 'backward', 'dp-allreduce', 'tp-collective', 'pp-send'] as const;
    const streams = ['compute', 'comm', 'tp', 'pp', 'copy'] as const;
    const startNs: number[] = [];
    const endNs: number[] = [];
    for (let r = 0; r < ranks; r++) {
      streams.forEach((stream, si) => {
        let t = 0;
        for (let i = 0; i < perLane; i++) {
          const d = 1 + ((i * 7919 + r * 13 + si) % 100_000);
          program.local(
            r,
            stream,
            kinds[(i + si) % 5],
            `a rather long task label, layer ${i % 80}, micro-batch ${i % 16} <&>`,
            d,
          );
          startNs.push(t);
          endNs.push(t + d);
          t += d + (i % 7) * 50;
        }
      });
    }
    const makespanNs = endNs.reduce((a, b) => Math.max(a, b), 0);
    const trace: Trace = { program, startNs: Float64Array.from(startNs), endNs: Float64Array.from(endNs), makespanNs };
    const big = renderTimeline({
      trace,
      result: run.result,
      label,
      ranks: [...Array(ranks).keys()],
      streams: [...streams],
    });
    expect(Buffer.byteLength(big)).toBeLessThan(2 * 1024 * 1024);
    const r = parseSvg(big);
    expect(r.querySelectorAll('g.lane').length).toBe(ranks * streams.length);
    expect(r.querySelector('.note')!.textContent).toMatch(/merged/);
  });
});
