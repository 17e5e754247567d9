import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { resolveScenario } from '../scenario/resolve.js';
import { simulateStep } from '../sim/simulateStep.js';
import { table as formatTable } from '../report/textTable.js';
import { setSummary } from './setSummary.js';
import type { RowProgress } from './rowProgress.js';
import type { ValidateOptions } from './validateArgs.js';
import {
  achievedTflopsPerGpu,
  megatronSc21Setup,
  parseMegatronSc21Csv,
  virtualStagesFor,
  type MegatronSc21Row,
} from './megatronSc21.js';

/**
 * `clustersim check-published --set megatron-sc21` (or `npm run validate -- --set megatron-sc21`):
 * predicts every row of Table 1 of Narayanan et al. (SC21) and compares the achieved teraFLOP/s per GPU, computed
 * with the paper's Eq. 3 from the predicted step time, with the published value. Options: `--limit N`, `--json`.
 */

/** Each row predicted, one after the other, with its achieved TFLOP/s and error. */
function predictRows(rows: MegatronSc21Row[], progress: RowProgress) {
  const shown = progress(rows.length);
  const outcomes = rows.map((row, i) => {
    const stepTimeS = simulateStep(megatronSc21Setup(row, resolveScenario)).result.stepTimeS;
    const predicted = achievedTflopsPerGpu(row, stepTimeS);
    shown.tick(`row ${i + 1}`);
    return {
      row,
      virtualStages: virtualStagesFor(row),
      stepTimeS,
      predictedTflops: predicted,
      publishedTflops: row.tflopsPerGpu,
      errorPct: (100 * (predicted - row.tflopsPerGpu)) / row.tflopsPerGpu,
    };
  });
  shown.stop();
  return outcomes;
}

type Sc21Outcome = ReturnType<typeof predictRows>[number];

const f = (x: number, d = 1) => x.toFixed(d);

/** The table of rows: the split, the predicted step and TFLOP/s beside the published. */
function rowTable(outcomes: Sc21Outcome[]): string {
  return formatTable(
    ['params B', 'GPUs', 'tp', 'pp', 'v', 'dp', 'batch', 'pred. step s', 'pred. TFLOP/s', 'published', 'error'],
    outcomes.map((o) => [
      f(o.row.paramsB),
      o.row.gpus,
      o.row.tp,
      o.row.pp,
      o.virtualStages,
      o.row.gpus / (o.row.tp * o.row.pp),
      o.row.batch,
      f(o.stepTimeS, 2),
      f(o.predictedTflops),
      f(o.publishedTflops, 0),
      `${f(o.errorPct)}%`,
    ]),
  ).replace(/^/gm, '  ');
}

/** Predicts the table and returns the text to print, ending in a newline (`--json`: one JSON object). */
export function runMegatronSc21(options: Pick<ValidateOptions, 'limit' | 'json'>, progress: RowProgress): string {
  const file = fileURLToPath(new URL('../../test/validation/megatron-sc21-table1.csv', import.meta.url));
  const table = parseMegatronSc21Csv(readFileSync(file, 'utf8'));
  const t0 = Date.now();
  const outcomes = predictRows(table.rows.slice(0, options.limit), progress);
  const summary = setSummary(table.source, t0, outcomes, (o) => ({
    predicted: o.predictedTflops,
    measured: o.publishedTflops,
  }));
  if (options.json) return JSON.stringify(summary, null, 2) + '\n';
  const lines = [
    `Megatron-LM SC21 Table 1 (weak scaling): ${summary.rows} rows predicted in ${f(summary.wallS)} s`,
    ...table.source.map((s) => `  ${s}`),
    '',
    rowTable(outcomes),
    '',
    `MAPE ${f(summary.mapePct, 2)}% of TFLOP/s per GPU; mean signed error ${f(summary.meanSignedErrorPct, 2)}%` +
      ' (positive: predicted faster than published)',
  ];
  return lines.join('\n') + '\n';
}
