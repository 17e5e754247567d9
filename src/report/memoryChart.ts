import * as d3 from 'd3';
import type { MemoryBreakdown } from '../sim/memory/memory.js';
import type { StepResult } from '../sim/simulateStep.js';
import { createSvg, drawLegend, px, serializeSvg } from './svgDom.js';
import { bytesText } from './format.js';

/** One bar of the memory chart: the memory of the ranks of one pipeline stage (or of all ranks). */
export interface MemoryBar {
  label: string;
  breakdown: MemoryBreakdown;
}

/** The parts a bar is stacked from, bottom to top, with their colours. */
export const MEMORY_PARTS = [
  { key: 'weightsBytes', label: 'weights', color: '#4e79a7' },
  { key: 'gradientsBytes', label: 'gradients', color: '#f28e2b' },
  { key: 'optimizerBytes', label: 'optimizer state', color: '#59a14f' },
  { key: 'activationsBytes', label: 'activations', color: '#b07aa1' },
  { key: 'buffersBytes', label: 'buffers', color: '#76b7b2' },
  { key: 'reserveBytes', label: 'runtime reserve', color: '#bab0ac' },
] as const satisfies readonly { key: keyof MemoryBreakdown; label: string; color: string }[];

/** The widest a chart makes itself (a caller may ask for more), px: fits a 1,366 px laptop screen with its margins. */
export const MAX_NATURAL_WIDTH_PX = 1200;

/** A bar ending closer than this under the capacity line has its total written above the line instead, px. */
const LABEL_CLEARANCE_PX = 18;

function isBreakdown(x: unknown): x is MemoryBreakdown {
  return (
    typeof x === 'object' &&
    x !== null &&
    MEMORY_PARTS.every((p) => typeof (x as Record<string, unknown>)[p.key] === 'number')
  );
}

/**
 * The bars of a result: one per pipeline stage when the simulator reports `memory.perStage` with more than
 * one stage (breakdowns, optionally with a `stage` number or a `label`), else the single breakdown,
 * labelled "all ranks".
 */
export function memoryBars(result: StepResult): MemoryBar[] {
  const perStage = (result.memory as { perStage?: unknown }).perStage;
  if (Array.isArray(perStage) && perStage.length > 1 && perStage.every(isBreakdown)) {
    return perStage.map((b, i) => {
      const extra = b as MemoryBreakdown & { stage?: unknown; label?: unknown };
      const label =
        typeof extra.label === 'string' ? extra.label : `stage ${typeof extra.stage === 'number' ? extra.stage : i}`;
      return { label, breakdown: b };
    });
  }
  return [{ label: 'all ranks', breakdown: result.memory.breakdown }];
}

function totalOf(b: MemoryBreakdown): number {
  return MEMORY_PARTS.reduce((a, p) => a + b[p.key], 0);
}

/** What the memory chart shows. */
export interface MemoryChartInput {
  bars: readonly MemoryBar[];
  /** GPU memory capacity, bytes. */
  capacityBytes: number;
  title: string;
  widthPx?: number;
}

/**
 * Stacked bars of memory per GPU (weights, gradients, optimizer state, activations, buffers, runtime
 * reserve), one per pipeline stage, against a dashed line at the GPU's capacity. A bar over the line
 * is labelled OOM with the shortfall. Returns the SVG document as a string.
 */
export function renderMemoryChart(input: MemoryChartInput): string {
  const height = 380;
  const m = { left: 70, right: 190, top: 48, bottom: 40 };
  // Bars at most ~110 px wide: a single bar spanning the plot reads as a background, not a bar. At most
  // `MAX_NATURAL_WIDTH_PX` wide however many stages (16 stages made it 2,700 px and cut the legend off a laptop
  // screen): the bars narrow instead.
  const natural = Math.min(MAX_NATURAL_WIDTH_PX, m.left + 40 + 150 * input.bars.length + m.right);
  const width = Math.max(input.widthPx ?? natural, 560);
  const totals = input.bars.map((b) => totalOf(b.breakdown));
  const top = Math.max(input.capacityBytes, ...totals) * 1.1;
  const gib = 2 ** 30;
  const plotW = Math.min(width - m.left - m.right, 40 + 150 * input.bars.length);
  const x = d3
    .scaleBand<string>()
    .domain(input.bars.map((b) => b.label))
    .range([m.left, m.left + plotW])
    .paddingInner(0.3)
    .paddingOuter(0.4);
  const y = d3
    .scaleLinear()
    .domain([0, top / gib])
    .nice()
    .range([height - m.bottom, m.top]);
  const yBytes = (b: number) => y(b / gib);

  const svg = createSvg(width, height, 'memory-chart').attr('data-bars', input.bars.length);
  svg
    .append('text')
    .attr('class', 'title')
    .attr('x', 12)
    .attr('y', 22)
    .attr('font-size', 15)
    .attr('font-weight', 600)
    .text(input.title);
  svg
    .append('g')
    .attr('class', 'axis y')
    .attr('transform', `translate(${m.left},0)`)
    .call(d3.axisLeft(y).ticks(8) as never);
  svg
    .append('text')
    .attr('transform', `translate(18,${(m.top + height - m.bottom) / 2}) rotate(-90)`)
    .attr('text-anchor', 'middle')
    .text('memory per GPU (GiB)');
  // Narrow bars: the stage numbers alone under them, and what they number said once beside the axis.
  const numbersOnly = x.step() < 64 && input.bars.every((b) => b.label.startsWith('stage '));
  const xAxis = d3
    .axisBottom(x)
    .tickSizeOuter(0)
    .tickFormat((label) => (numbersOnly ? label.slice('stage '.length) : label));
  svg
    .append('g')
    .attr('class', 'axis x')
    .attr('transform', `translate(0,${height - m.bottom})`)
    .call(xAxis as never);
  if (numbersOnly)
    svg
      .append('text')
      .attr('class', 'x-caption')
      .attr('x', m.left + plotW / 2)
      .attr('y', height - 6)
      .attr('text-anchor', 'middle')
      .text('pipeline stage');

  // A total fits over its bar: the font shrinks with the bar (≈ 0.6 em a character), to no less than 7 px.
  const totalFontPx = (text: string) => Math.max(7, Math.min(12, x.bandwidth() / 0.6 / text.length));
  input.bars.forEach((bar, i) => {
    const g = svg.append('g').attr('class', 'bar').attr('data-label', bar.label);
    let base = 0;
    for (const part of MEMORY_PARTS) {
      const v = bar.breakdown[part.key];
      if (v <= 0) continue;
      g.append('rect')
        .attr('class', 'segment')
        .attr('data-part', part.label)
        .attr('x', px(x(bar.label)!))
        .attr('width', px(x.bandwidth()))
        .attr('y', px(yBytes(base + v)))
        .attr('height', px(yBytes(base) - yBytes(base + v)))
        .attr('fill', part.color)
        .append('title')
        .text(`${bar.label}, ${part.label}: ${bytesText(v)}`);
      base += v;
    }
    const over = totals[i] - input.capacityBytes;
    const barTop = yBytes(totals[i]);
    const capTop = yBytes(input.capacityBytes);
    g.append('text')
      .attr('class', 'total')
      .attr('x', px(x(bar.label)! + x.bandwidth() / 2))
      // Above the bar, or above the capacity line when the bar ends just under it (so they do not collide).
      .attr('y', px((barTop > capTop && barTop - capTop < LABEL_CLEARANCE_PX ? capTop : barTop) - 6))
      .attr('text-anchor', 'middle')
      .attr('fill', over > 0 ? '#c0392b' : '#222')
      .attr(
        'font-size',
        px(totalFontPx(over > 0 ? `${bytesText(totals[i])}: OOM by ${bytesText(over)}` : bytesText(totals[i]))),
      )
      .text(over > 0 ? `${bytesText(totals[i])}: OOM by ${bytesText(over)}` : bytesText(totals[i]));
  });

  const capY = px(yBytes(input.capacityBytes));
  svg
    .append('line')
    .attr('class', 'capacity')
    .attr('x1', m.left)
    .attr('x2', m.left + plotW)
    .attr('y1', capY)
    .attr('y2', capY)
    .attr('stroke', '#c0392b')
    .attr('stroke-width', 1.5)
    .attr('stroke-dasharray', '6 4');
  svg
    .append('text')
    .attr('x', m.left + plotW + 6)
    .attr('y', capY + 4)
    .attr('fill', '#c0392b')
    .text(`capacity ${bytesText(input.capacityBytes)}`);

  // Under the capacity label when there is room for it there; else at the top, away from the label (a bar far over
  // capacity puts the line near the bottom, and a legend under it would be drawn off the chart).
  const legendH = 18 * MEMORY_PARTS.length;
  const legendY = capY + 24 + legendH <= height ? Math.max(m.top, capY + 24) : m.top;
  const legend = svg
    .append('g')
    .attr('class', 'legend')
    .attr('transform', `translate(${m.left + plotW + 24},${legendY})`);
  drawLegend(
    legend,
    [...MEMORY_PARTS].reverse(),
    (p) => p.label,
    (g, p) => g.append('rect').attr('width', 14).attr('height', 14).attr('fill', p.color),
    1, // one entry per row
  );
  return serializeSvg(svg);
}
