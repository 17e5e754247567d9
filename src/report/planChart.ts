import * as d3 from 'd3';
import { createSvg, drawLegend, px, serializeSvg } from './svgDom.js';

/** One candidate on the chart: its step time and the memory of its fullest GPU. */
export interface PlanChartPoint {
  label: string;
  stepS: number;
  memoryBytes: number;
  /** Rank among the simulated best (1 is the winner), if it is one of them. */
  rank?: number;
}

export interface PlanChartInput {
  title: string;
  points: readonly PlanChartPoint[];
  capacityBytes: number;
  widthPx?: number;
}

/**
 * The points no other beats on both axes: none both faster and holding less memory (ties on one axis broken by the
 * other). Sorted by memory; returned as indices into `points`.
 */
export function paretoFront(points: readonly Pick<PlanChartPoint, 'stepS' | 'memoryBytes'>[]): number[] {
  const order = points
    .map((_, i) => i)
    .sort((a, b) => points[a].memoryBytes - points[b].memoryBytes || points[a].stepS - points[b].stepS || a - b);
  const front: number[] = [];
  let fastest = Infinity;
  for (const i of order) {
    if (points[i].stepS < fastest) {
      front.push(i);
      fastest = points[i].stepS;
    }
  }
  return front;
}

const H = 360;
const M = { left: 70, right: 24, top: 40, bottom: 48 };
const GIB = 2 ** 30;

/**
 * The candidates a plan estimated: step time against memory per GPU, the Pareto front joined by a line, the GPU's
 * capacity as a dashed line, and the simulated best numbered. Returns the SVG as a string.
 */
export function renderPlanChart(input: PlanChartInput): string {
  const width = input.widthPx ?? 1000;
  const pts = input.points;
  const x = d3
    .scaleLinear()
    .domain([0, input.capacityBytes / GIB])
    .nice()
    .range([M.left, width - M.right]);
  const steps = pts.map((p) => p.stepS);
  const y = d3
    .scaleLog()
    .domain([Math.min(...steps) / 1.1, Math.max(...steps) * 1.1])
    .range([M.top + H, M.top]);
  const svg = createSvg(width, M.top + H + M.bottom + 40, 'plan-chart').attr('data-points', pts.length);
  svg.append('text').attr('x', 12).attr('y', 22).attr('font-size', 16).attr('font-weight', 600).text(input.title);
  svg
    .append('g')
    .attr('class', 'axis x')
    .attr('transform', `translate(0,${M.top + H})`)
    .call(d3.axisBottom(x).ticks(8) as never);
  svg
    .append('g')
    .attr('class', 'axis y')
    .attr('transform', `translate(${M.left},0)`)
    .call(d3.axisLeft(y).ticks(6, '~g') as never);
  svg
    .append('text')
    .attr('x', (M.left + width - M.right) / 2)
    .attr('y', M.top + H + 36)
    .attr('text-anchor', 'middle')
    .text('memory of the fullest GPU (GiB)');
  svg
    .append('text')
    .attr('transform', `translate(16,${M.top + H / 2}) rotate(-90)`)
    .attr('text-anchor', 'middle')
    .text('estimated step time (s, log scale)');
  const cap = x(input.capacityBytes / GIB);
  svg
    .append('line')
    .attr('class', 'capacity')
    .attr('x1', px(cap))
    .attr('x2', px(cap))
    .attr('y1', M.top)
    .attr('y2', M.top + H)
    .attr('stroke', '#b33')
    .attr('stroke-dasharray', '5 4');
  const front = paretoFront(pts);
  const line = d3
    .line<number>()
    .x((i) => px(x(pts[i].memoryBytes / GIB)))
    .y((i) => px(y(pts[i].stepS)));
  svg
    .append('path')
    .attr('class', 'pareto')
    .attr('d', line(front))
    .attr('fill', 'none')
    .attr('stroke', '#2a7')
    .attr('stroke-width', 2);
  const onFront = new Set(front);
  svg
    .append('g')
    .selectAll('circle')
    .data(pts.map((p, i) => ({ p, i })))
    .join('circle')
    .attr('class', ({ i, p }) => `point${onFront.has(i) ? ' front' : ''}${p.rank !== undefined ? ' simulated' : ''}`)
    .attr('cx', ({ p }) => px(x(p.memoryBytes / GIB)))
    .attr('cy', ({ p }) => px(y(p.stepS)))
    .attr('r', ({ p }) => (p.rank !== undefined ? 5 : 3))
    .attr('fill', ({ i, p }) => (p.rank !== undefined ? '#1f5fb4' : onFront.has(i) ? '#2a7' : '#bbb'))
    .append('title')
    .text(({ p }) => `${p.label}: ${p.stepS.toPrecision(4)} s, ${(p.memoryBytes / GIB).toFixed(1)} GiB`);
  const ranked = pts.filter((p) => p.rank !== undefined);
  svg
    .append('g')
    .selectAll('text')
    .data(ranked)
    .join('text')
    .attr('class', 'rank')
    .attr('x', (p) => px(x(p.memoryBytes / GIB) + 7))
    .attr('y', (p) => px(y(p.stepS) - 6))
    .attr('font-weight', 600)
    .text((p) => `#${p.rank}`);
  const entries = [
    { text: 'estimated candidate', color: '#bbb' },
    { text: 'Pareto front: nothing both faster and smaller', color: '#2a7' },
    { text: 'simulated in full (#1 the winner)', color: '#1f5fb4' },
    { text: "the GPU's memory", color: '#b33' },
  ];
  const legend = svg
    .append('g')
    .attr('class', 'legend')
    .attr('transform', `translate(${M.left},${M.top + H + 50})`);
  drawLegend(
    legend,
    entries,
    (e) => e.text,
    (g, e) => void g.append('circle').attr('cx', 7).attr('cy', 7).attr('r', 4).attr('fill', e.color),
    width - M.left - M.right,
  );
  return serializeSvg(svg);
}
