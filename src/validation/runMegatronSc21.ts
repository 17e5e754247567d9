import { rowProgress } from './rowProgress.js';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { resolveScenario } from '../scenario/resolve.js';
import { simulateStep } from '../sim/simulateStep.js';
import { table as formatTable } from '../report/textTable.js';
import { setSummary } from './setSummary.js';
import type { ValidateOptions } from './validateArgs.js';
import { achievedTflopsPerGpu, megatronSc21Setup, parseMegatronSc21Csv, virtualStagesFor } from './megatronSc21.js';

/**
 * `clustersim check-published --set megatron-sc21` (or `npm run validate -- --set megatron-sc21`):
 * predicts every row of Table 1 of Narayanan et al. (SC21) and compares the achieved teraFLOP/s per GPU, computed
 * with the paper's Eq. 3 from the predicted step time, with the published value. Options: `--limit N`, `--json`.
 */
export function runMegatronSc21(options: Pick<ValidateOptions, 'limit' | 'json'>): void {
  const { limit } = options;
  const file = fileURLToPath(new URL('../../test/validation/megatron-sc21-table1.csv', import.meta.url));
  const table = parseMegatronSc21Csv(readFileSync(file, 'utf8'));
  const rows = table.rows.slice(0, limit);
  const t0 = Date.now();
  const progress = rowProgress(rows.length);
  const outcomes = rows.map((row, i) => {
    const stepTimeS = simulateStep(megatronSc21Setup(row, resolveScenario)).result.stepTimeS;
    const predicted = achievedTflopsPerGpu(row, stepTimeS);
    progress.tick(`row ${i + 1}`);
    return {
      row,
      virtualStages: virtualStagesFor(row),
      stepTimeS,
      predictedTflops: predicted,
      publishedTflops: row.tflopsPerGpu,
      errorPct: (100 * (predicted - row.tflopsPerGpu)) / row.tflopsPerGpu,
    };
  });
  progress.stop();
  const summary = setSummary(table.source, t0, outcomes, (o) => ({
    predicted: o.predictedTflops,
    measured: o.publishedTflops,
  }));
  if (options.json) {
    process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
    return;
  }
  const f = (x: number, d = 1) => x.toFixed(d);
  const lines = [
    `Megatron-LM SC21 Table 1 (weak scaling): ${summary.rows} rows predicted in ${f(summary.wallS)} s`,
    ...table.source.map((s) => `  ${s}`),
    '',
    formatTable(
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
    ).replace(/^/gm, '  '),
    '',
    `MAPE ${f(summary.mapePct, 2)}% of TFLOP/s per GPU; mean signed error ${f(summary.meanSignedErrorPct, 2)}% (positive: predicted faster than published)`,
  ];
  process.stdout.write(lines.join('\n') + '\n');
}
