import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { resolveScenario } from '../scenario/resolve.js';
import { simulateStep } from '../sim/simulateStep.js';
import { table as formatTable } from '../report/textTable.js';
import { setSummary } from './setSummary.js';
import {
  megatronSp22Setup,
  parseMegatronSp22Csv,
  publishedIterationS,
  SP22_CONFIGS,
  table4LayerMs,
  TABLE4_LAYER_MS,
  type Table4Experiment,
} from './megatronSp22.js';
import type { ValidateOptions } from './validateArgs.js';

/**
 * `npm run validate -- --set megatron-sp22`: predicts the iteration time of every model of Korthikanti et al.
 * (2022) Table 5 in both of its configurations and prints predicted against published with the MAPE, then the
 * per-layer times of its Table 4.
 */
export function runMegatronSp22(options: Pick<ValidateOptions, 'limit' | 'json'>): void {
  const file = fileURLToPath(new URL('../../test/validation/megatron-sp22-table5.csv', import.meta.url));
  const table = parseMegatronSp22Csv(readFileSync(file, 'utf8'));
  const t0 = Date.now();
  const outcomes = table.rows.slice(0, options.limit).flatMap((row) =>
    SP22_CONFIGS.map((config) => {
      const predictedS = simulateStep(megatronSp22Setup(row, config, resolveScenario)).result.stepTimeS;
      const publishedS = publishedIterationS(row, config);
      return {
        paramsB: row.paramsB,
        config,
        predictedS,
        publishedS,
        errorPct: (100 * (predictedS - publishedS)) / publishedS,
      };
    }),
  );
  const summary = setSummary(table.source, t0, outcomes, (o) => ({ predicted: o.predictedS, measured: o.publishedS }));
  const layerMs = table4LayerMs(table.rows[0], (setup) => simulateStep(setup).result.stepTimeS * 1e3, resolveScenario);
  const table4 = (Object.keys(TABLE4_LAYER_MS) as Table4Experiment[]).map((e) => ({
    experiment: e,
    predictedMs: layerMs[e],
    publishedMs: TABLE4_LAYER_MS[e],
  }));
  if (options.json) {
    process.stdout.write(JSON.stringify({ ...summary, table4 }, null, 2) + '\n');
    return;
  }
  const f = (x: number, d = 2) => x.toFixed(d);
  process.stdout.write(
    [
      `Korthikanti et al. 2022, Table 5 (iteration time, no data parallelism): ${summary.rows} predictions in ${f(summary.wallS, 1)} s`,
      ...table.source.map((s) => `  ${s}`),
      '',
      formatTable(
        ['params B', 'configuration', 'predicted s', 'published s', 'error'],
        outcomes.map((o) => [o.paramsB, o.config, f(o.predictedS), f(o.publishedS), `${f(o.errorPct, 1)}%`]),
      ).replace(/^/gm, '  '),
      '',
      `MAPE ${f(summary.mapePct)}% of iteration time; mean signed error ${f(summary.meanSignedErrorPct)}% (negative: predicted faster than published)`,
      '',
      'Table 4: one 22B layer, forward + backward (ms; predicted = 3-layer step − 2-layer step, optimizer share included)',
      formatTable(
        ['experiment', 'predicted ms', 'published ms', 'overhead predicted', 'overhead published'],
        table4.map((t) => [
          t.experiment,
          f(t.predictedMs),
          f(t.publishedMs, 1),
          `${f(100 * (t.predictedMs / layerMs.none - 1), 1)}%`,
          `${f(100 * (t.publishedMs / TABLE4_LAYER_MS.none - 1), 1)}%`,
        ]),
      ).replace(/^/gm, '  '),
    ].join('\n') + '\n',
  );
}
