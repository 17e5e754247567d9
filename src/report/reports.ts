import type { StreamKind } from '../sim/program/types.js';
import type { Trace } from '../sim/program/trace.js';
import type { StepResult } from '../sim/simulateStep.js';
import type { ScaleRow } from '../sweep/scaleMath.js';
import { renderTimeline } from './timeline.js';
import { memoryBars, renderMemoryChart } from './memoryChart.js';
import { renderScalingChart } from './scalingChart.js';
import { SCALE_TABLE_HEADER, scaleTableRows } from './scaleTable.js';
import { dataTable, figure, keyValueTable, reportPage, type ReportSection } from './html.js';
import { ALTERNATIVES_HEADER, alternativeRows, summaryRows, titleOf, type ScenarioLabel } from './summary.js';
import type { Alternative } from '../advise/alternatives.js';

/** One simulated step and how to draw it. */
export interface StepView {
  label: ScenarioLabel;
  trace: Trace;
  result: StepResult;
  ranks: readonly number[];
  streams: readonly StreamKind[];
}

/** The timeline SVG of a step. */
export function stepTimelineSvg(v: StepView): string {
  return renderTimeline({ trace: v.trace, result: v.result, label: v.label, ranks: v.ranks, streams: v.streams });
}

/** The memory chart SVG of a step. */
export function stepMemorySvg(v: Pick<StepView, 'label' | 'result'>): string {
  return renderMemoryChart({
    bars: memoryBars(v.result),
    capacityBytes: v.result.memory.capacityBytes,
    title: `Memory per GPU: ${v.label.name}, ${v.result.gpus} GPUs`,
  });
}

function stepSections(v: StepView, timelineSvg?: string): ReportSection[] {
  return [
    {
      heading: 'Timeline',
      caption:
        `Ranks ${v.ranks.join(', ')}, streams ${v.streams.join(', ')}; ` +
        'hover a bar for the task. Hatched: the compute stream has nothing to do.',
      html: figure(timelineSvg ?? stepTimelineSvg(v)),
    },
    {
      heading: 'Memory per GPU',
      caption: "Stacked per pipeline stage against the GPU's capacity (dashed).",
      html: figure(stepMemorySvg(v)),
    },
  ];
}

/**
 * The HTML report of `simulate`: summary table, what to try (the alternatives simulate ran, when any), timeline and
 * memory chart in one self-contained page.
 */
export function simulateReportHtml(
  v: StepView,
  generator: string,
  timelineSvg?: string,
  alternatives: readonly Alternative[] = [],
): string {
  const tried = alternatives.some((a) => a.stepTimeS !== undefined)
    ? [
        {
          heading: 'What to try',
          caption: 'Each option simulated; add its --set to the command to run it.',
          html: dataTable(ALTERNATIVES_HEADER, alternativeRows(v.result, alternatives), 'data', true),
        },
      ]
    : [];
  return reportPage(titleOf(v.label, v.result), `${generator}, seed ${v.result.seed}`, [
    { heading: 'Summary', html: keyValueTable(summaryRows(v.label, v.result)) },
    ...tried,
    ...stepSections(v, timelineSvg),
  ]);
}

/** What the `scale` report shows: every scenario's rows, and the largest simulated size of the first. */
export interface ScaleView {
  mode: 'strong' | 'weak';
  series: readonly { name: string; rows: readonly ScaleRow[] }[];
  /** The largest simulated size of the first scenario, drawn as timeline and memory chart. */
  largest?: StepView;
}

/** The scaling chart SVG of one or more scenarios. */
export function scalingSvg(v: ScaleView): string {
  const names = v.series.map((s) => s.name).join(' vs ');
  return renderScalingChart({
    series: v.series,
    mode: v.mode,
    title: `${v.mode === 'strong' ? 'Strong' : 'Weak'} scaling: ${names}`,
  });
}

/** The HTML report of `scale`: curves, one table per scenario, and the timeline and memory of the largest size. */
export function scaleReportHtml(v: ScaleView, generator: string, chartSvg?: string): string {
  const sections: ReportSection[] = [
    {
      heading: 'Scaling curves',
      caption: 'Speedup and efficiency are relative to the smallest simulated size of each scenario.',
      html: figure(chartSvg ?? scalingSvg(v)),
    },
    ...v.series.map((s) => ({
      heading: `Table: ${s.name}`,
      html: dataTable(SCALE_TABLE_HEADER, scaleTableRows(s.rows), 'scale', true),
    })),
  ];
  if (v.largest) {
    const more = stepSections(v.largest).map((s) => ({
      ...s,
      heading: `${s.heading} at ${v.largest!.result.gpus} GPUs (${v.largest!.label.name})`,
    }));
    sections.push(
      {
        heading: `Summary at ${v.largest.result.gpus} GPUs`,
        html: keyValueTable(summaryRows(v.largest.label, v.largest.result)),
      },
      ...more,
    );
  }
  return reportPage(
    `${v.mode === 'strong' ? 'Strong' : 'Weak'} scaling: ${v.series.map((s) => s.name).join(' vs ')}`,
    generator,
    sections,
  );
}
