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
  type MegatronSp22Row,
  type Table4Experiment,
} from './megatronSp22.js';
import type { ValidateOptions } from './validateArgs.js';

/**
 * `npm run validate -- --set megatron-sp22`: predicts the iteration time of every model of Korthikanti et al.
 * (2022) Table 5 in both of its configurations and returns predicted against published with the MAPE, then the
 * per-layer times of its Table 4, as the text to print.
 */

/** Every model of Table 5 in both configurations, predicted against published. */
function table5Outcomes(rows: MegatronSp22Row[]) {
  return rows.flatMap((row) =>
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
}

/** Table 4: one layer of the first model, forward and backward, in each of its experiments. */
function table4Outcomes(row: MegatronSp22Row) {
  const layerMs = table4LayerMs(row, (setup) => simulateStep(setup).result.stepTimeS * 1e3, resolveScenario);
  return (Object.keys(TABLE4_LAYER_MS) as Table4Experiment[]).map((e) => ({
    experiment: e,
    predictedMs: layerMs[e],
    publishedMs: TABLE4_LAYER_MS[e],
  }));
}

type Table5Summary = ReturnType<typeof setSummary<ReturnType<typeof table5Outcomes>[number]>>;
type Table4 = ReturnType<typeof table4Outcomes>;

const f = (x: number, d = 2) => x.toFixed(d);

/** Table 5's lines: the source, predicted against published and the MAPE. */
function table5Lines(summary: Table5Summary): string[] {
  return [
    'Korthikanti et al. 2022, Table 5 (iteration time, no data parallelism): ' +
      `${summary.rows} predictions in ${f(summary.wallS, 1)} s`,
    ...summary.source.map((s) => `  ${s}`),
    '',
    formatTable(
      ['params B', 'configuration', 'predicted s', 'published s', 'error'],
      summary.outcomes.map((o) => [o.paramsB, o.config, f(o.predictedS), f(o.publishedS), `${f(o.errorPct, 1)}%`]),
    ).replace(/^/gm, '  '),
    '',
    `MAPE ${f(summary.mapePct)}% of iteration time; mean signed error ${f(summary.meanSignedErrorPct)}%` +
      ' (negative: predicted faster than published)',
  ];
}

/** Table 4's lines: each experiment's layer time and its overhead over the one without recompute. */
function table4Lines(table4: Table4): string[] {
  const predictedNone = table4.find((t) => t.experiment === 'none')!.predictedMs;
  return [
    'Table 4: one 22B layer, forward + backward' +
      ' (ms; predicted = 3-layer step − 2-layer step, optimizer share included)',
    formatTable(
      ['experiment', 'predicted ms', 'published ms', 'overhead predicted', 'overhead published'],
      table4.map((t) => [
        t.experiment,
        f(t.predictedMs),
        f(t.publishedMs, 1),
        `${f(100 * (t.predictedMs / predictedNone - 1), 1)}%`,
        `${f(100 * (t.publishedMs / TABLE4_LAYER_MS.none - 1), 1)}%`,
      ]),
    ).replace(/^/gm, '  '),
  ];
}

/** Predicts both tables and returns the text to print, ending in a newline (`--json`: one JSON object). */
export function runMegatronSp22(options: Pick<ValidateOptions, 'limit' | 'json'>): string {
  const file = fileURLToPath(new URL('../../test/validation/megatron-sp22-table5.csv', import.meta.url));
  const table = parseMegatronSp22Csv(readFileSync(file, 'utf8'));
  const t0 = Date.now();
  const outcomes = table5Outcomes(table.rows.slice(0, options.limit));
  const summary = setSummary(table.source, t0, outcomes, (o) => ({ predicted: o.predictedS, measured: o.publishedS }));
  const table4 = table4Outcomes(table.rows[0]);
  if (options.json) return JSON.stringify({ ...summary, table4 }, null, 2) + '\n';
  return [...table5Lines(summary), '', ...table4Lines(table4)].join('\n') + '\n';
}
