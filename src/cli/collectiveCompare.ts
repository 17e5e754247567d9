import { implausibleBandwidth } from '../scenario/measuredCollectives.js';
import type { NodeSpec } from '../sim/hardware/types.js';
import { median } from '../calibrate/stats.js';
import { fileErrorReason } from '../fileErrors.js';
import { parseCollectiveTable } from '../scenario/ncclTestsTable.js';
import type { SweepRow } from '../sim/collectives/sweep.js';
import type { NcclTestsOp } from '../sim/collectives/types.js';
import { UsageError } from './usageError.js';
import { readInputText } from '../inputFile.js';

/** One size of `collective --compare`: the model's row next to the measured time. */
export interface ComparedRow extends SweepRow {
  measuredUs: number;
  /** (predicted − measured) / measured, percent. */
  errorPct: number;
}

/** Sizes and times of a measured table (nccl-tests output or CSV), or a usage error naming the file. */
export function readComparison(
  path: string,
  op: NcclTestsOp,
  ranks: number,
  node: NodeSpec,
): { bytes: number; timeNs: number }[] {
  let text: string;
  try {
    text = readInputText(path);
  } catch (err) {
    throw new UsageError(`--compare: cannot read '${path}': ${fileErrorReason(err)}`);
  }
  let points: { bytes: number; timeNs: number }[];
  try {
    points = [...parseCollectiveTable(text, op, ranks, path).points];
  } catch (err) {
    throw new UsageError(`--compare: ${(err as Error).message}`);
  }
  const implausible = implausibleBandwidth(points, op, ranks, node);
  if (implausible) throw new UsageError(`--compare '${path}': ${implausible}`);
  return points;
}

/** The model's rows at the measured sizes, with the measured time and the error of each. */
export function compareRows(
  rows: readonly SweepRow[],
  measured: readonly { bytes: number; timeNs: number }[],
): ComparedRow[] {
  return rows.map((r, i) => {
    const measuredUs = measured[i].timeNs / 1e3;
    return { ...r, measuredUs, errorPct: (100 * (r.timeUs - measuredUs)) / measuredUs };
  });
}

/** Median and worst absolute error of a comparison, percent. */
export function comparisonSummary(rows: readonly ComparedRow[]): {
  medianAbsErrorPct: number;
  worstAbsErrorPct: number;
  worstBytes: number;
} {
  const abs = rows.map((r) => Math.abs(r.errorPct));
  const worst = abs.indexOf(Math.max(...abs));
  return { medianAbsErrorPct: median(abs), worstAbsErrorPct: abs[worst], worstBytes: rows[worst].bytes };
}

/** The comparison as a table: size, measured and predicted time, error, the model's algorithm; then the summary. */
export function formatComparison(
  rows: readonly ComparedRow[],
  summary: ReturnType<typeof comparisonSummary>,
  title: string,
): string {
  const w = [12, 13, 14, 9, 16];
  const line = (cols: (string | number)[]) => cols.map((c, i) => String(c).padStart(w[i])).join(' ');
  return [
    `# clustersim collective: ${title}`,
    line(['#  size (B)', 'measured (us)', 'predicted (us)', 'error %', 'algorithm']),
    ...rows.map((r) =>
      line([
        r.bytes,
        r.measuredUs.toFixed(2),
        r.timeUs.toFixed(2),
        r.errorPct.toFixed(1),
        `${r.algorithm}/${r.protocol}`,
      ]),
    ),
    `# median |error| ${summary.medianAbsErrorPct.toFixed(1)}%, ` +
      `worst ${summary.worstAbsErrorPct.toFixed(1)}% at ${summary.worstBytes} B`,
  ].join('\n');
}
