import { describe, expect, it } from 'vitest';
import { memoryBars, MEMORY_PARTS, renderMemoryChart } from '../../src/report/memoryChart.js';
import type { MemoryBreakdown } from '../../src/sim/memory/memory.js';
import type { StepResult } from '../../src/sim/simulateStep.js';
import { bertRun, num, parseSvg } from './fixtures.js';

const GiB = 2 ** 30;
const breakdown = (gib: number): MemoryBreakdown => ({
  weightsBytes: gib * GiB,
  gradientsBytes: gib * GiB,
  optimizerBytes: 6 * gib * GiB,
  activationsBytes: 2 * gib * GiB,
  buffersBytes: 0.5 * GiB,
  reserveBytes: 1 * GiB,
  totalBytes: 10 * gib * GiB + 1.5 * GiB,
});

describe('memory chart', () => {
  it('shows one bar labelled "all ranks" when the result has no per-stage memory', () => {
    const result = { memory: { breakdown: breakdown(1), capacityBytes: 80 * GiB } } as unknown as StepResult;
    expect(memoryBars(result).map((b) => b.label)).toEqual(['all ranks']);
  });

  it('shows one bar per pipeline stage when the result has memory.perStage', () => {
    const result = {
      memory: { breakdown: breakdown(1), perStage: [breakdown(2), breakdown(1)] },
    } as unknown as StepResult;
    expect(memoryBars(result).map((b) => b.label)).toEqual(['stage 0', 'stage 1']);
  });

  it('stacks the parts of each bar up to its total, with the capacity line at the GPU memory', () => {
    const bars = [
      { label: 'stage 0', breakdown: breakdown(8) },
      { label: 'stage 1', breakdown: breakdown(2) },
    ];
    const root = parseSvg(renderMemoryChart({ bars, capacityBytes: 80 * GiB, title: 'test' }));
    const groups = [...root.querySelectorAll('g.bar')];
    expect(groups.map((g) => g.getAttribute('data-label'))).toEqual(['stage 0', 'stage 1']);
    const segs = [...groups[0].querySelectorAll('rect.segment')];
    expect(segs.map((s) => s.getAttribute('data-part'))).toEqual(MEMORY_PARTS.map((p) => p.label));
    // Segments touch: each one's top is the next one's bottom.
    for (let i = 1; i < segs.length; i++)
      expect(num(segs[i], 'y') + num(segs[i], 'height')).toBeCloseTo(num(segs[i - 1], 'y'), 0);
    // 81.5 GiB on an 80 GiB GPU: stage 0 is OOM by 1.5 GiB, stage 1 fits.
    expect(groups[0].querySelector('text.total')!.textContent).toContain('OOM by 1.50 GiB');
    expect(groups[1].querySelector('text.total')!.textContent).not.toContain('OOM');
    const cap = root.querySelector('line.capacity')!;
    expect(num(cap, 'y1')).toBeGreaterThan(num(segs[segs.length - 1], 'y'));
  });

  it('draws a real result without empty segments', () => {
    const { run } = bertRun();
    const root = parseSvg(
      renderMemoryChart({
        bars: memoryBars(run.result),
        capacityBytes: run.result.memory.capacityBytes,
        title: 'bert',
      }),
    );
    for (const s of root.querySelectorAll('rect.segment')) expect(num(s, 'height')).toBeGreaterThanOrEqual(0);
    expect(root.querySelectorAll('g.legend-item').length).toBe(MEMORY_PARTS.length);
  });
  it('keeps the legend inside the chart, whether a bar fits or is far over capacity', () => {
    for (const gib of [0.5, 4, 8, 12, 30, 100]) {
      const root = parseSvg(
        renderMemoryChart({
          bars: [{ label: 'all ranks', breakdown: breakdown(gib) }],
          capacityBytes: 80 * GiB,
          title: 'test',
        }),
      );
      const height = Number(root.getAttribute('viewBox')!.split(' ')[3]);
      const legendY = Number(
        /translate\([^,]+,([^)]+)\)/.exec(root.querySelector('g.legend')!.getAttribute('transform')!)![1],
      );
      const items = [...root.querySelectorAll('g.legend-item')];
      expect(items.length).toBe(MEMORY_PARTS.length);
      for (const item of items) {
        const itemY = Number(/translate\([^,]+,([^)]+)\)/.exec(item.getAttribute('transform')!)![1]);
        // Each swatch is 14 px high, from the item's top.
        expect(legendY + itemY + 14).toBeLessThanOrEqual(height);
        expect(legendY + itemY).toBeGreaterThanOrEqual(0);
      }
    }
  });
  it('writes each total just above its own bar, and above the capacity line when the bar ends just under it', () => {
    const capacityBytes = 80 * GiB;
    // Totals 11.5, 41.5 and 79.5 GiB (breakdown(gib) totals 10 × gib + 1.5 GiB).
    const bars = [1, 4, 7.8].map((gib, i) => ({ label: `stage ${i}`, breakdown: breakdown(gib) }));
    const root = parseSvg(renderMemoryChart({ bars, capacityBytes, title: 'test' }));
    const capY = num(root.querySelector('line.capacity')!, 'y1');
    for (const g of root.querySelectorAll('g.bar')) {
      const segs = [...g.querySelectorAll('rect.segment')];
      const top = Math.min(...segs.map((s) => num(s, 'y')));
      const label = num(g.querySelector('text.total')!, 'y');
      if (top - capY > 20) {
        // Well under capacity: the label sits on its bar, not up at the capacity line.
        expect(top - label).toBeGreaterThan(0);
        expect(top - label).toBeLessThan(12);
      } else expect(label).toBeLessThan(capY);
    }
  });
});
