import * as d3 from 'd3';
import type { StreamKind } from '../sim/program/types.js';
import type { Trace } from '../sim/program/trace.js';
import type { StepResult } from '../sim/simulateStep.js';
import { KIND_ORDER, kindClass, kindStyle } from './kinds.js';
import { collectLanes, mergeLanes, type Lane, type LaneSpan } from './timelineLanes.js';
import { createSvg, drawLegend, px, serializeSvg } from './svgDom.js';
import { compactRanks, simulatedRanks } from './ranks.js';
import { durationText, escapeXml, timeUnitFor, wrapWords } from './format.js';
import { keyFiguresLine, titleOf, type ScenarioLabel } from './summary.js';

/** What a timeline shows. */
export interface TimelineInput {
  trace: Trace;
  result: StepResult;
  label: ScenarioLabel;
  /** Ranks to draw, each with one lane per stream. */
  ranks: readonly number[];
  streams: readonly StreamKind[];
  /** Total width, px (default 1200: fits a laptop screen). */
  widthPx?: number;
  /**
   * Most bars drawn over all lanes (default 6000, at most about 1.3 MB of SVG); shorter tasks are merged
   * so that any scenario stays under the 2 MB target.
   */
  maxBars?: number;
}

const LANE_H = 18;
const LANE_GAP = 2;
const RANK_GAP = 10;
const MARGIN = { left: 215, right: 24, top: 62 };
/** Bars narrower than this get no tooltip: one cannot point at them anyway, px. */
const TOOLTIP_MIN_PX = 3;

/**
 * One bar as SVG markup: a task as a full-height rect; a merged bar as a stack, from the bottom, of its kinds' time
 * over its length (a bar of 40% forward, 30% backward and 30% idle is a rect of 0.4 of the height under one of 0.3,
 * over the idle background), so that the kinds and the gaps a merge joins stay visible. The tooltip goes on the first
 * rect.
 */
function barMarkup(s: LaneSpan, x: number, w: number, tip: string): string {
  const lengthNs = s.endNs - s.startNs;
  if (!s.mix || lengthNs <= 0)
    return `<rect class="span ${kindClass(s.kind)}" x="${x}" width="${w}" height="${LANE_H}">${tip}</rect>`;
  let html = '';
  let bottom = LANE_H;
  s.mix.forEach((m, i) => {
    const h = Math.min(bottom, (LANE_H * m.ns) / lengthNs);
    if (h <= 0) return;
    bottom -= h;
    html +=
      `<rect class="span ${kindClass(m.kind)}" x="${x}" y="${px(bottom)}" width="${w}" ` +
      `height="${px(h)}">${i === 0 ? tip : ''}</rect>`;
  });
  return html;
}

/** Vertical position of each lane, px from the top of the plot. */
function laneOffsets(lanes: readonly Lane[]): number[] {
  const ys: number[] = [];
  let y = 0;
  lanes.forEach((lane, i) => {
    if (i > 0) y += lanes[i - 1].rank !== lane.rank ? RANK_GAP : LANE_GAP;
    ys.push(y);
    y += LANE_H;
  });
  return ys;
}

/**
 * Draws a step as an SVG timeline: one lane per chosen rank and stream, bars coloured by task kind,
 * hatched background where the compute stream has nothing to do (idle, pipeline bubble), a time axis
 * in ns/µs/ms/s, a title with the scenario's key figures and a legend of the kinds shown.
 * Returns the SVG document as a string.
 */
export function renderTimeline(input: TimelineInput): string {
  const width = input.widthPx ?? 1200;
  const plotW = width - MARGIN.left - MARGIN.right;
  const makespan = Math.max(1, input.trace.makespanNs);
  const raw = collectLanes(input.trace, input.ranks, input.streams);
  const { lanes, resolutionNs: resolution } = mergeLanes(raw, makespan / plotW, makespan, input.maxBars ?? 6000);
  const taskCount = raw.reduce((a, l) => a + l.spans.length, 0);
  const barCount = lanes.reduce((a, l) => a + l.spans.length, 0);
  const ys = laneOffsets(lanes);
  const plotH = lanes.length === 0 ? 0 : ys[ys.length - 1] + LANE_H;

  const unit = timeUnitFor(makespan);
  const x = d3
    .scaleLinear()
    .domain([0, makespan / unit.ns])
    .range([MARGIN.left, MARGIN.left + plotW]);
  const xNs = (ns: number) => x(ns / unit.ns);

  const svg = createSvg(width, 100, 'timeline')
    .attr('data-ranks', input.ranks.join(','))
    .attr('data-streams', input.streams.join(','))
    .attr('data-lanes', lanes.length)
    .attr('data-plot-x0', MARGIN.left)
    .attr('data-plot-x1', MARGIN.left + plotW);
  const kinds = KIND_ORDER.filter((k) => lanes.some((l) => l.spans.some((s) => s.kind === k)));
  const extraKinds = [...new Set(lanes.flatMap((l) => l.spans.map((s) => s.kind)))].filter(
    (k) => !(KIND_ORDER as string[]).includes(k),
  );
  const allKinds = [...kinds, ...extraKinds];
  svg
    .append('style')
    .text(
      `.timeline .span{stroke:none}` +
        allKinds.map((k) => `.timeline .${kindClass(k)}{fill:${kindStyle(k).color}}`).join(''),
    );
  const defs = svg.append('defs');
  defs
    .append('pattern')
    .attr('id', 'tl-idle')
    .attr('width', 6)
    .attr('height', 6)
    .attr('patternUnits', 'userSpaceOnUse')
    .attr('patternTransform', 'rotate(45)')
    .call((p) => p.append('rect').attr('width', 6).attr('height', 6).attr('fill', '#fbfbfb'))
    .call((p) =>
      p
        .append('line')
        .attr('x1', 0)
        .attr('y1', 0)
        .attr('x2', 0)
        .attr('y2', 6)
        .attr('stroke', '#c8c8c8')
        .attr('stroke-width', 2),
    );

  svg
    .append('text')
    .attr('class', 'title')
    .attr('x', 12)
    .attr('y', 22)
    .attr('font-size', 16)
    .attr('font-weight', 600)
    .text(titleOf(input.label, input.result));
  svg
    .append('text')
    .attr('class', 'subtitle')
    .attr('x', 12)
    .attr('y', 42)
    .attr('fill', '#444')
    .text(keyFiguresLine(input.result));

  const plot = svg.append('g').attr('class', 'plot').attr('transform', `translate(0,${MARGIN.top})`);
  const ticks = x.ticks(10);
  plot
    .append('g')
    .attr('class', 'grid')
    .selectAll('line')
    .data(ticks)
    .join('line')
    .attr('x1', (t) => px(x(t)))
    .attr('x2', (t) => px(x(t)))
    .attr('y1', -4)
    .attr('y2', plotH)
    .attr('stroke', '#e4e4e4');

  const nodeOf = (rank: number) => Math.floor(rank / input.label.gpusPerNode);
  lanes.forEach((lane, i) => {
    const g = plot
      .append('g')
      .attr('class', 'lane')
      .attr('data-rank', lane.rank)
      .attr('data-stream', lane.stream)
      .attr('transform', `translate(0,${ys[i]})`);
    if (i === 0 || lanes[i - 1].rank !== lane.rank) {
      g.append('text')
        .attr('class', 'rank-label')
        .attr('x', 12)
        .attr('y', 13)
        .attr('font-weight', 600)
        .text(`rank ${lane.rank} (node ${nodeOf(lane.rank)})`);
    }
    g.append('text')
      .attr('class', 'stream-label')
      .attr('x', MARGIN.left - 8)
      .attr('y', 13)
      .attr('text-anchor', 'end')
      .attr('fill', '#555')
      .text(lane.stream);
    g.append('rect')
      .attr('class', 'lane-bg')
      .attr('x', MARGIN.left)
      .attr('width', plotW)
      .attr('height', LANE_H)
      .attr('fill', lane.stream === 'compute' ? 'url(#tl-idle)' : '#f3f3f3');
    let html = '';
    for (const s of lane.spans) {
      const x0 = Math.max(MARGIN.left, xNs(s.startNs));
      const x1 = Math.min(MARGIN.left + plotW, Math.max(xNs(s.endNs), x0 + 0.5));
      const w = px(Math.max(0.1, Math.min(x1, MARGIN.left + plotW) - px(x0)));
      const start = px(Math.min(x0, MARGIN.left + plotW - w));
      const tip =
        x1 - x0 >= TOOLTIP_MIN_PX
          ? '<title>' +
            escapeXml(`${s.label}: ${durationText(s.endNs - s.startNs)} from ${durationText(s.startNs)}`) +
            '</title>'
          : '';
      html += barMarkup(s, start, w, tip);
    }
    // Thousands of bars: building them as markup is several times faster than one DOM call per attribute.
    g.append('g').attr('class', 'spans').attr('shape-rendering', 'crispEdges').html(html);
  });

  const axisY = MARGIN.top + plotH + 6;
  const axis = svg.append('g').attr('class', 'axis').attr('transform', `translate(0,${axisY})`);
  axis.call(d3.axisBottom(x).ticks(10).tickFormat(d3.format('~g')) as never);
  axis
    .append('text')
    .attr('x', MARGIN.left + plotW / 2)
    .attr('y', 34)
    .attr('fill', '#222')
    .attr('text-anchor', 'middle')
    .text(`time since the step started (${unit.name})`);

  const legend = svg
    .append('g')
    .attr('class', 'legend')
    .attr('transform', `translate(${MARGIN.left},${axisY + 50})`);
  type Entry = { kind: string; text: string };
  const entries: Entry[] = [
    ...allKinds.map((k) => ({ kind: k, text: kindStyle(k).label })),
    { kind: 'idle', text: 'idle (no compute: waiting, bubble)' },
  ];
  const legendH = drawLegend(
    legend,
    entries,
    (e) => e.text,
    (g, e) =>
      g
        .append('rect')
        .attr('width', 14)
        .attr('height', 14)
        .attr('stroke', '#999')
        .attr('stroke-width', 0.5)
        .attr('fill', e.kind === 'idle' ? 'url(#tl-idle)' : kindStyle(e.kind).color),
    plotW,
    (e) => ({ 'data-kind': e.kind }),
  );
  const note =
    barCount < taskCount
      ? `${taskCount} task spans drawn as ${barCount} bars: spans closer than ${durationText(resolution)} merged. `
      : '';
  const footY = axisY + 50 + legendH + 14;
  const sim = simulatedRanks(input.trace);
  const mirrored =
    sim.length < input.trace.program.rankCount ? ` Simulated ranks: ${compactRanks(sim)}; the others mirror them.` : '';
  // Wrapped to the plot's width (≈ 6.1 px a character at 11 px): one line of 1,024 ranks ran off the picture.
  const footLines = wrapWords(
    `${note}Ranks shown: ${input.ranks.join(', ')} of ${input.trace.program.rankCount}.${mirrored}`,
    Math.floor(plotW / 6.1),
  );
  const foot = svg
    .append('text')
    .attr('class', 'note')
    .attr('x', MARGIN.left)
    .attr('y', footY)
    .attr('fill', '#666')
    .attr('font-size', 11);
  footLines.forEach((l, i) =>
    foot
      .append('tspan')
      .attr('x', MARGIN.left)
      .attr('dy', i === 0 ? 0 : 14)
      .text(l),
  );
  const bottomY = footY + 14 * (footLines.length - 1) + 10;
  svg.attr('height', bottomY).attr('viewBox', `0 0 ${width} ${bottomY}`);
  return serializeSvg(svg);
}
