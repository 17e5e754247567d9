import * as d3 from 'd3';
import { isSimulated, type ScaleRow } from '../sweep/scaleMath.js';
import { createSvg, drawLegend, px, serializeSvg, type SvgSelection } from './svgDom.js';
import { countText, percentText } from './format.js';

/** One scenario's curve. */
export interface ScalingSeries {
  name: string;
  rows: readonly ScaleRow[];
  /** Set when efficiency is against this size, not the smallest asked for (smaller ones were interrupted). */
  scalingBaseGpus?: number;
}

export interface ScalingChartInput {
  series: readonly ScalingSeries[];
  title: string;
  /** Shown in the axis label: what stays fixed. */
  mode: 'strong' | 'weak';
  widthPx?: number;
}

type Point = ScaleRow & { samplesPerS: number; efficiency: number };

const PANEL_H = 300;
const M = { left: 76, right: 20, top: 64, bottom: 48 };
const GAP = 70;

function pointsOf(s: ScalingSeries): Point[] {
  return s.rows.filter((r) => isSimulated(r) && r.efficiency !== undefined) as Point[];
}

/** Draws markers: filled when the setup fits in memory, hollow when it is OOM. */
function drawPoints(
  g: d3.Selection<SVGGElement, unknown, null, undefined>,
  pts: Point[],
  color: string,
  x: (p: Point) => number,
  y: (p: Point) => number,
  name: string,
): void {
  g.selectAll('circle')
    .data(pts)
    .join('circle')
    .attr('class', (p) => `point ${p.status}`)
    .attr('data-gpus', (p) => p.gpus)
    .attr('cx', (p) => px(x(p)))
    .attr('cy', (p) => px(y(p)))
    .attr('r', 4)
    .attr('fill', (p) => (p.status === 'oom' ? '#fff' : color))
    .attr('stroke', color)
    .attr('stroke-width', 1.5)
    .append('title')
    .text(
      (p) =>
        `${name}, ${p.gpus} GPUs: ${countText(p.samplesPerS, 1)} samples/s, ` +
        `efficiency ${percentText(p.efficiency)}${p.status === 'oom' ? ' (does not fit in memory)' : ''}`,
    );
}

function panelTitle(svg: SvgSelection, x: number, text: string): void {
  svg
    .append('text')
    .attr('x', x)
    .attr('y', M.top - 12)
    .attr('font-weight', 600)
    .text(text);
}

/**
 * Scaling curves of one or more scenarios: throughput against GPUs on log–log axes with each series'
 * ideal (linear from its smallest size, dashed), and parallel efficiency against GPUs. Hollow markers
 * are sizes that do not fit in memory; infeasible sizes are left out. Returns the SVG as a string.
 */
export function renderScalingChart(input: ScalingChartInput): string {
  const width = input.widthPx ?? 1160;
  const panelW = (width - M.left - M.right - GAP - M.left) / 2;
  const all = input.series.flatMap(pointsOf);
  const gpus = [...new Set(all.map((p) => p.gpus))].sort((a, b) => a - b);
  const gMin = gpus[0] ?? 1;
  const gMax = Math.max(gpus[gpus.length - 1] ?? 2, gMin * 2);
  const idealMax = Math.max(
    1,
    ...input.series.map((s) => {
      const pts = pointsOf(s);
      return pts.length ? (pts[0].samplesPerS * pts[pts.length - 1].gpus) / pts[0].gpus : 1;
    }),
  );
  const thrMin = Math.min(...all.map((p) => p.samplesPerS), idealMax);
  const effMax = Math.max(1.05, ...all.map((p) => p.efficiency));

  const left0 = M.left;
  const right0 = M.left + panelW + GAP + M.left;
  const xL = d3
    .scaleLog()
    .base(2)
    .domain([gMin / 1.3, gMax * 1.3])
    .range([left0, left0 + panelW]);
  const xR = d3
    .scaleLog()
    .base(2)
    .domain([gMin / 1.3, gMax * 1.3])
    .range([right0, right0 + panelW]);
  const yT = d3
    .scaleLog()
    .domain([thrMin / 1.5, idealMax * 1.5])
    .range([M.top + PANEL_H, M.top]);
  // From a little under the lowest efficiency, not from 0: 87% against 97% is the difference to read.
  const effMin = Math.max(0, Math.floor((Math.min(1, ...all.map((p) => p.efficiency)) - 0.05) * 10) / 10);
  const yE = d3
    .scaleLinear()
    .domain([effMin, effMax])
    .nice()
    .range([M.top + PANEL_H, M.top]);
  const color = d3.scaleOrdinal<string, string>(d3.schemeTableau10).domain(input.series.map((s) => s.name));

  const svg = createSvg(width, 100, 'scaling-chart').attr('data-series', input.series.length);
  svg
    .append('text')
    .attr('class', 'title')
    .attr('x', 12)
    .attr('y', 22)
    .attr('font-size', 16)
    .attr('font-weight', 600)
    .text(input.title);
  panelTitle(svg, left0, 'throughput (samples/s), log scale');
  panelTitle(svg, right0, 'parallel efficiency (speedup ÷ ideal speedup)');

  const gpuAxis = (x: d3.ScaleLogarithmic<number, number>) =>
    d3
      .axisBottom(x)
      .tickValues(gpus.length ? gpus : [gMin])
      .tickFormat(d3.format('d'));
  const baseY = M.top + PANEL_H;
  svg
    .append('g')
    .attr('class', 'axis x')
    .attr('transform', `translate(0,${baseY})`)
    .call(gpuAxis(xL) as never);
  svg
    .append('g')
    .attr('class', 'axis x')
    .attr('transform', `translate(0,${baseY})`)
    .call(gpuAxis(xR) as never);
  svg
    .append('g')
    .attr('class', 'axis y')
    .attr('transform', `translate(${left0},0)`)
    .call(d3.axisLeft(yT).ticks(6, '~s') as never);
  svg
    .append('g')
    .attr('class', 'axis y')
    .attr('transform', `translate(${right0},0)`)
    .call(d3.axisLeft(yE).ticks(6).tickFormat(d3.format('.0%')) as never);
  for (const x0 of [left0, right0]) {
    svg
      .append('text')
      .attr('x', x0 + panelW / 2)
      .attr('y', baseY + 38)
      .attr('text-anchor', 'middle')
      .text(
        `GPUs (log scale; ${input.mode} scaling: ` +
          `${input.mode === 'strong' ? 'global batch fixed' : 'batch per data-parallel replica fixed'})`,
      );
  }
  svg
    .append('line')
    .attr('class', 'ideal-efficiency')
    .attr('x1', right0)
    .attr('x2', right0 + panelW)
    .attr('y1', px(yE(1)))
    .attr('y2', px(yE(1)))
    .attr('stroke', '#888')
    .attr('stroke-dasharray', '5 4');

  for (const s of input.series) {
    const pts = pointsOf(s);
    const c = color(s.name);
    const g = svg.append('g').attr('class', 'series').attr('data-name', s.name);
    if (pts.length === 0) continue;
    const first = pts[0];
    const last = pts[pts.length - 1];
    g.append('line')
      .attr('class', 'ideal')
      .attr('x1', px(xL(first.gpus)))
      .attr('y1', px(yT(first.samplesPerS)))
      .attr('x2', px(xL(last.gpus)))
      .attr('y2', px(yT((first.samplesPerS * last.gpus) / first.gpus)))
      .attr('stroke', c)
      .attr('stroke-opacity', 0.6)
      .attr('stroke-dasharray', '5 4');
    const lineT = d3
      .line<Point>()
      .x((p) => px(xL(p.gpus)))
      .y((p) => px(yT(p.samplesPerS)));
    const lineE = d3
      .line<Point>()
      .x((p) => px(xR(p.gpus)))
      .y((p) => px(yE(p.efficiency)));
    g.append('path')
      .attr('class', 'throughput')
      .attr('d', lineT(pts))
      .attr('fill', 'none')
      .attr('stroke', c)
      .attr('stroke-width', 2);
    g.append('path')
      .attr('class', 'efficiency')
      .attr('d', lineE(pts))
      .attr('fill', 'none')
      .attr('stroke', c)
      .attr('stroke-width', 2);
    drawPoints(
      g.append('g'),
      pts,
      c,
      (p) => xL(p.gpus),
      (p) => yT(p.samplesPerS),
      s.name,
    );
    drawPoints(
      g.append('g'),
      pts,
      c,
      (p) => xR(p.gpus),
      (p) => yE(p.efficiency),
      s.name,
    );
  }

  type Entry = { text: string; color: string; kind: 'series' | 'ideal' | 'oom' };
  const entries: Entry[] = [
    ...input.series.map((s): Entry => ({
      text:
        s.scalingBaseGpus !== undefined
          ? `${s.name} (efficiency against ${s.scalingBaseGpus} GPUs, the smallest size done that fits)`
          : s.name,
      color: color(s.name),
      kind: 'series',
    })),
    { text: 'ideal (linear from the smallest size)', color: '#888', kind: 'ideal' },
    { text: 'hollow: does not fit in memory', color: '#888', kind: 'oom' },
  ];
  const legend = svg
    .append('g')
    .attr('class', 'legend')
    .attr('transform', `translate(${left0},${baseY + 58})`);
  const legendH = drawLegend(
    legend,
    entries,
    (e) => e.text,
    (g, e) => {
      if (e.kind === 'oom')
        g.append('circle')
          .attr('cx', 7)
          .attr('cy', 7)
          .attr('r', 4)
          .attr('fill', '#fff')
          .attr('stroke', e.color)
          .attr('stroke-width', 1.5);
      else
        g.append('line')
          .attr('x1', 0)
          .attr('x2', 14)
          .attr('y1', 7)
          .attr('y2', 7)
          .attr('stroke', e.color)
          .attr('stroke-width', 2)
          .attr('stroke-dasharray', e.kind === 'ideal' ? '4 3' : null);
    },
    width - left0 - M.right,
  );
  const h = baseY + 58 + legendH + 8;
  svg.attr('height', h).attr('viewBox', `0 0 ${width} ${h}`);
  return serializeSvg(svg);
}
