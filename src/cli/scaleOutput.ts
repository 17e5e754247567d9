import { withErrorBand } from '../accuracy/bandText.js';
import { storedResiduals } from '../accuracy/residualStore.js';
import type { ScaleMode, ScaleSeries } from '../sweep/scale.js';
import { isSimulated, scalingBaseGpus } from '../sweep/scaleMath.js';
import { pickCommSettings } from '../sweep/commSettings.js';
import { parallelSizesText } from '../report/format.js';
import { SCALE_TABLE_HEADER, scaleCsv, scaleTableRows } from '../report/scaleTable.js';
import type { ScaleView } from '../report/reports.js';
import { VERSION } from '../version.js';
import { loadReports, stepView, writeReportFile } from './reportFiles.js';
import type { Output } from './output.js';
import { UsageError } from './usageError.js';

/** Aligns text cells in columns: all right-aligned except the last (the note), two spaces apart. */
function alignColumns(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const all = [header, ...rows];
  const widths = header.map((_, c) => Math.max(...all.map((r) => r[c].length)));
  return all
    .map((r) =>
      r
        .map((cell, c) => (c === r.length - 1 ? cell : cell.padStart(widths[c])))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** The printed table of one scenario's sweep; its heading names the size speedup and efficiency are against. */
export function formatScaleSeries(s: ScaleSeries): string {
  const fixed = s.mode === 'strong' ? 'global batch fixed' : 'batch per replica fixed';
  const grid = s.tp > 1 || s.pp > 1 || (s.cp ?? 1) > 1 ? `, ${parallelSizesText(s)} fixed, dp grows` : '';
  const base = scalingBaseGpus(s.rows);
  const smallerOom = base !== undefined && s.rows.some((r) => r.status === 'oom' && r.gpus < base);
  const against =
    base !== undefined
      ? `; speedup and efficiency against ${base} GPUs${smallerOom ? ', the smallest size that fits' : ''}`
      : '';
  const table = alignColumns(SCALE_TABLE_HEADER, scaleTableRows(s.rows));
  return `${s.name}: ${s.mode} scaling (${fixed}${grid}${against})\n\n${table}`;
}

/** A warning a scenario file gave when it was read, and the file. */
export interface FileWarning {
  file: string;
  message: string;
}

/**
 * The `--json` document of `scale`, with the scenarios' warnings when there are any. Each series says what it holds
 * fixed: tp, pp, cp (when above 1) and the communication settings that apply (`CommSettings`: cpCommType with cp,
 * tpCommOverlap and tpCommOverlapSms when on), as `simulate --json` writes them under `parallel`, and, when any size
 * was simulated, `scalingBaseGpus`: the size its speedup and efficiency are against (the CSV's `speedup_base_gpus`).
 */
export function scaleJson(
  mode: ScaleMode,
  series: readonly ScaleSeries[],
  warnings: readonly FileWarning[] = [],
): Record<string, unknown> {
  return {
    version: VERSION,
    mode,
    series: series.map((s) => {
      const base = scalingBaseGpus(s.rows);
      return {
        name: s.name,
        source: s.source,
        tp: s.tp,
        pp: s.pp,
        ...(s.cp !== undefined ? { cp: s.cp } : {}),
        ...pickCommSettings(s),
        ...(base !== undefined ? { scalingBaseGpus: base } : {}),
        rows: s.rows,
      };
    }),
    ...(warnings.length > 0 ? { warnings } : {}),
  };
}

/** Whether any size of the sweep was simulated (rows that could not be built, or were left out, are infeasible). */
export function anySimulated(series: readonly ScaleSeries[]): boolean {
  return series.some((s) => s.rows.some(isSimulated));
}

/** Prints the tables (or `--json`) and writes `--csv`, `--svg` and `--report`: the same for `scale` and `merge`. */
export async function writeScaleOutputs(
  series: ScaleSeries[],
  mode: ScaleMode,
  opts: { json?: boolean; csv?: string; svg?: string; report?: string },
  io: Output,
  generator: string,
  warnings: readonly FileWarning[] = [],
): Promise<void> {
  const residuals = storedResiduals();
  series = series.map((s) => ({ ...s, rows: s.rows.map((r) => withErrorBand(r, residuals)) }));
  if (opts.json) io.out(JSON.stringify(scaleJson(mode, series, warnings), null, 2));
  else io.out(series.map(formatScaleSeries).join('\n\n'));
  // A sweep of sizes none of which could be built is a mistake in the sizes (or the scenario): no empty chart for it.
  if (!anySimulated(series)) {
    throw new UsageError(
      'no size of the sweep could be simulated (the reasons are in the note ' +
        `column${opts.json ? ', `reason` in the JSON' : ''}); choose GPU counts of whole nodes whose data-parallel ` +
        `size divides the global batch${opts.csv || opts.svg || opts.report ? ', nothing was written' : ''}`,
    );
  }

  if (!opts.csv && !opts.svg && !opts.report) return;
  const { scaleReportHtml, scalingSvg } = await loadReports();
  const view: ScaleView = { mode, series };
  const chart = opts.svg || opts.report ? scalingSvg(view) : '';
  if (opts.csv) writeReportFile(opts.csv, scaleCsv(series), io);
  if (opts.svg) writeReportFile(opts.svg, chart, io);
  if (opts.report) {
    const big = series[0].largest;
    if (big) view.largest = stepView(big.scenario, big.run, {});
    writeReportFile(opts.report, scaleReportHtml(view, generator, chart), io);
  }
}
