import { layoutText, knobsText } from '../plan/candidates.js';
import type { PlanResult } from '../plan/search.js';
import { dataTable, figure, reportPage, type ReportSection } from './html.js';
import { escapeXml } from './format.js';
import { renderPlanChart, type PlanChartPoint } from './planChart.js';
import { PLAN_TABLE_HEADER, planTableRows, type PlanUnits } from './planTable.js';

/** The chart's points: every estimated candidate, the simulated best numbered by their place. */
export function planChartPoints(p: PlanResult): PlanChartPoint[] {
  const key = (c: { layout: unknown; knobs: unknown }) => JSON.stringify([c.layout, c.knobs]);
  const rank = new Map(p.rows.map((r, i) => [key(r.candidate), i + 1]));
  return p.points.map((pt) => {
    const r = rank.get(key(pt.candidate));
    return {
      label: `${layoutText(pt.candidate.layout)}; ${knobsText(pt.candidate.knobs)}`,
      stepS: pt.estimateS,
      memoryBytes: pt.peakBytesPerGpu,
      ...(r !== undefined ? { rank: r } : {}),
    };
  });
}

export interface PlanReportText {
  title: string;
  /** The generator line under the title. */
  meta: string;
  /** What the search considered and removed, one line each. */
  search: readonly string[];
  /** Why the winner wins, the ties, the cost and the command, one line each. */
  notes: readonly string[];
}

const lines = (texts: readonly string[]) =>
  `<pre style="white-space:pre-wrap">${escapeXml(texts.map((t) => t.trim()).join('\n'))}</pre>`;

/** The HTML report of a plan: the chart, the table of the best, what the search did, and why the winner wins. */
export function planReportHtml(p: PlanResult, text: PlanReportText, units: PlanUnits): string {
  const sections: ReportSection[] = [];
  const capacity = p.rows[0]?.sim.capacityBytes;
  if (p.points.length > 0 && capacity !== undefined) {
    sections.push({
      heading: 'Step time against memory per GPU',
      caption:
        'Every estimated candidate; those left out by their bound are slower than the best simulated and not drawn.',
      html: figure(
        renderPlanChart({
          title: `${p.points.length} estimated candidates on ${p.gpus} GPUs`,
          points: planChartPoints(p),
          capacityBytes: capacity,
        }),
      ),
    });
  }
  sections.push({
    heading: 'The best, simulated in full',
    html: dataTable(PLAN_TABLE_HEADER, planTableRows(p, units), 'plan', true),
  });
  sections.push({ heading: 'Why', html: lines(text.notes) });
  sections.push({ heading: 'The search', html: lines(text.search) });
  return reportPage(text.title, text.meta, sections);
}
