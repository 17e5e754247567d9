import { describe, expect, it } from 'vitest';
import { mergeSpans, type LaneSpan } from '../../src/report/timelineLanes.js';
import { renderTimeline } from '../../src/report/timeline.js';
import { renderMemoryChart, MAX_NATURAL_WIDTH_PX, type MemoryBar } from '../../src/report/memoryChart.js';
import { renderScalingChart } from '../../src/report/scalingChart.js';
import { kindClass } from '../../src/report/kinds.js';
import { defaultRanks, pipelineStageRanks, usedStreams } from '../../src/report/ranks.js';
import { scenarioFromFile } from '../../src/cli/scenarioInput.js';
import { simulateStep } from '../../src/sim/simulateStep.js';
import type { ScaleRow } from '../../src/sweep/scaleMath.js';
import { num, parseSvg } from './fixtures.js';

// Issue 26, item 13: pictures of large runs.
const span = (startNs: number, endNs: number, kind: string): LaneSpan => ({
  startNs,
  endNs,
  kind,
  label: kind,
  tasks: 1,
});

describe('a merged timeline bar keeps its kinds and its gaps', () => {
  it('stacks the time of each kind over the bar, most first, leaving the gaps between tasks as idle', () => {
    const [bar] = mergeSpans([span(0, 10, 'forward'), span(20, 40, 'backward'), span(45, 50, 'forward')], 100);
    expect(bar).toMatchObject({ startNs: 0, endNs: 50, tasks: 3, kind: 'backward' });
    expect(bar.mix).toEqual([
      { kind: 'backward', ns: 20 },
      { kind: 'forward', ns: 15 },
    ]);
  });

  it('shows at most three kinds, counting the rest with the third', () => {
    const [bar] = mergeSpans([span(0, 4, 'a'), span(4, 7, 'b'), span(7, 9, 'c'), span(9, 10, 'd')], 100);
    expect(bar.mix).toEqual([
      { kind: 'a', ns: 4 },
      { kind: 'b', ns: 3 },
      { kind: 'c', ns: 3 },
    ]);
  });

  it('leaves a task alone unmixed', () => {
    expect(mergeSpans([span(0, 500, 'forward')], 100)[0].mix).toBeUndefined();
  });
});

describe('the timeline of a 1,024-GPU pipeline', () => {
  // GPT-3 175B on 1,024 A100: TP 8 × PP 8 interleaved × DP 16, its forwards short beside its backwards.
  const scenario = scenarioFromFile('scenarios/gpt3-175b-1024xa100.yaml', []);
  const run = simulateStep(scenario);
  const ranks = defaultRanks({ trace: run.trace, gpusPerNode: 8, stages: pipelineStageRanks(scenario.parallel) });
  const svg = renderTimeline({
    trace: run.trace,
    result: run.result,
    label: { name: scenario.name, modelName: scenario.model.name, clusterName: scenario.cluster.name, gpusPerNode: 8 },
    ranks,
    streams: usedStreams(run.trace),
  });
  const root = parseSvg(svg);

  it('still shows forward work on the compute lanes, not one backward bar', () => {
    for (const lane of root.querySelectorAll('g.lane[data-stream="compute"]')) {
      expect(
        lane.querySelectorAll(`rect.${kindClass('forward')}`).length,
        `rank ${lane.getAttribute('data-rank')}`,
      ).toBeGreaterThan(0);
    }
  });

  it('leaves idle visible inside merged bars: some are shorter than the lane', () => {
    const heights = [...root.querySelectorAll('g.lane rect.span')].map((r) =>
      r.hasAttribute('y') ? num(r, 'height') : 18,
    );
    expect(heights.some((h) => h < 18 * 0.95)).toBe(true);
  });

  it('wraps its footer inside the picture', () => {
    const width = num(root, 'width');
    const x1 = num(root, 'data-plot-x1');
    const x0 = num(root, 'data-plot-x0');
    const lines = [...root.querySelectorAll('text.note tspan')];
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(x0 + (line.textContent ?? '').length * 6.1).toBeLessThanOrEqual(x1 + 1);
    expect(x1).toBeLessThanOrEqual(width);
  });
});

describe('a memory chart of many stages', () => {
  const bar = (i: number): MemoryBar => ({
    label: `stage ${i}`,
    breakdown: {
      weightsBytes: 1e10,
      gradientsBytes: 1e10,
      optimizerBytes: 2e10,
      activationsBytes: 3e10,
      buffersBytes: 0,
      reserveBytes: 1e9,
      totalBytes: 7.1e10,
    },
  });

  it('stays within a laptop screen for 16 stages, numbering the stages under narrow bars', () => {
    const root = parseSvg(
      renderMemoryChart({
        bars: Array.from({ length: 16 }, (_, i) => bar(i)),
        capacityBytes: 80 * 2 ** 30,
        title: 't',
      }),
    );
    expect(num(root, 'width')).toBeLessThanOrEqual(MAX_NATURAL_WIDTH_PX);
    expect(root.querySelector('text.x-caption')?.textContent).toBe('pipeline stage');
    expect([...root.querySelectorAll('g.axis.x .tick text')].map((t) => t.textContent)).toEqual(
      Array.from({ length: 16 }, (_, i) => String(i)),
    );
  });

  it('keeps its width and labels for two stages', () => {
    const root = parseSvg(renderMemoryChart({ bars: [bar(0), bar(1)], capacityBytes: 80 * 2 ** 30, title: 't' }));
    expect(num(root, 'width')).toBe(70 + 40 + 300 + 190);
    expect(root.querySelector('text.x-caption')).toBeNull();
  });
});

describe('the efficiency axis', () => {
  it('starts a little under the lowest efficiency, not at 0', () => {
    const row = (gpus: number, efficiency: number): ScaleRow => ({
      gpus,
      status: 'ok',
      samplesPerS: gpus * efficiency,
      stepTimeS: 1,
      memoryBytesPerGpu: 1,
      efficiency,
      speedup: (gpus / 8) * efficiency,
      fits: true,
    });
    const root = parseSvg(
      renderScalingChart({
        series: [{ name: 'a', rows: [row(8, 1), row(16, 0.95), row(32, 0.87)] }],
        title: 't',
        mode: 'strong',
      }),
    );
    // The right panel's axis (percent ticks): its lowest is 80%, not 0%.
    const eff = [...root.querySelectorAll('g.axis.y')[1].querySelectorAll('.tick text')].map((t) =>
      Number((t.textContent ?? '').replace('%', '')),
    );
    expect(Math.min(...eff)).toBe(80);
  });
});
