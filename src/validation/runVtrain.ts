import { readFileSync } from 'node:fs';
import { compiledWorker, defaultJobs, runTasks } from '../threads/taskPool.js';
import { mape, meanSignedErrorPct, parseVtrainCsv, VTRAIN_DATA_DIR, type VtrainRow } from './vtrain.js';
import { predictVtrainRow, type VtrainJob } from './vtrainPredict.js';
import { decompositionLines } from './decompositionReport.js';
import type { Outcome as PredictedRow } from './families.js';
import type { RowProgress } from './rowProgress.js';
import type { ValidateOptions } from './validateArgs.js';

/**
 * `clustersim check-published` without `--set` or `--set vtrain`: predicts vTrain's Megatron-DeepSpeed steps on A100
 * and returns the text to print (`--json`: one JSON object): MAPE overall, per set and per (model size, GPU count)
 * group, the worst rows and, with `--decompose`, the per-layer, per-micro-batch and per-step parts.
 */

type VtrainOptions = Pick<
  ValidateOptions,
  'only' | 'limit' | 'json' | 'decompose' | 'hostOpUs' | 'hostCollectiveUs' | 'vocab'
>;

/** A predicted row (families.ts) with its signed error. */
interface Outcome extends PredictedRow {
  errorPct: number;
}

/** The rows of the groups asked for, the first `limit` of each. */
function vtrainRows(only: ValidateOptions['only'], limit: number): VtrainRow[] {
  const rows: VtrainRow[] = [];
  for (const group of ['single', 'multi'] as const) {
    if (only && only !== group) continue;
    const text = readFileSync(`${VTRAIN_DATA_DIR}vtrain-${group}-node.csv`, 'utf8');
    rows.push(...parseVtrainCsv(text, group).slice(0, limit));
  }
  return rows;
}

/** Every row predicted on the pool of threads, with its error against the measured time. */
async function predictRows(rows: VtrainRow[], options: VtrainOptions, progress: RowProgress): Promise<Outcome[]> {
  const job: VtrainJob = {
    rows,
    opts: { hostOpUs: options.hostOpUs, hostCollectiveUs: options.hostCollectiveUs, vocab: options.vocab },
  };
  const shown = progress(rows.length);
  const { results } = await runTasks<VtrainJob, number>({
    jobs: defaultJobs(),
    worker: compiledWorker(new URL('./vtrainWorker.js', import.meta.url)),
    job,
    ids: rows.map((_, i) => i),
    runHere: (i) => predictVtrainRow(job, i),
    onResult: (i) => shown.tick(`row ${i + 1}`),
  });
  const outcomes = rows.map((row, i) => ({
    row,
    predictedMs: results[i],
    errorPct: (100 * (results[i] - row.measuredMs)) / row.measuredMs,
  }));
  shown.stop();
  return outcomes;
}

const pairs = (xs: Outcome[]) => xs.map((o) => ({ predicted: o.predictedMs, measured: o.row.measuredMs }));

/** The outcomes by (set, model size, GPU count), in the order of their first row. */
function byGroup(outcomes: Outcome[]): Map<string, Outcome[]> {
  const groups = new Map<string, Outcome[]>();
  for (const o of outcomes) {
    const size = o.row.paramsB !== undefined ? `${o.row.paramsB}B` : `h${o.row.hidden} l${o.row.layers}`;
    const k = `${o.row.group} ${size} ${o.row.gpus} GPUs`;
    groups.set(k, [...(groups.get(k) ?? []), o]);
  }
  return groups;
}

/** What `--json` prints (without the decomposition) and the text summarises. */
function vtrainSummary(outcomes: Outcome[], wallS: number, vocab: ValidateOptions['vocab']) {
  return {
    rows: outcomes.length,
    wallS,
    vocab,
    mapePct: {
      all: mape(pairs(outcomes)),
      single: mape(pairs(outcomes.filter((o) => o.row.group === 'single'))),
      multi: mape(pairs(outcomes.filter((o) => o.row.group === 'multi'))),
    },
    meanSignedErrorPct: meanSignedErrorPct(outcomes),
    groups: [...byGroup(outcomes).entries()].map(([name, os]) => ({
      name,
      rows: os.length,
      mapePct: mape(pairs(os)),
      meanSignedErrorPct: meanSignedErrorPct(os),
    })),
    worst: [...outcomes].sort((a, b) => Math.abs(b.errorPct) - Math.abs(a.errorPct)).slice(0, 10),
  };
}

type VtrainSummary = ReturnType<typeof vtrainSummary>;

/** What a sensitivity run sets in place of the cited host costs, for the first line of the output. */
function sensitivityNote(o: VtrainOptions): string {
  const set = [
    o.hostOpUs === undefined ? '' : `training.hostOpUs = ${o.hostOpUs} µs`,
    o.hostCollectiveUs === undefined ? '' : `training.hostCollectiveUs = ${o.hostCollectiveUs} µs`,
  ].filter((x) => x !== '');
  return set.length === 0 ? '' : ` (sensitivity run: ${set.join(', ')})`;
}

const f = (x: number) => x.toFixed(2);

/** The first lines: how many rows, what was set, and the MAPE beside vTrain's own. */
function headLines(summary: VtrainSummary, options: VtrainOptions): string[] {
  const { mapePct } = summary;
  const vocab = options.vocab === 'peer' ? '' : `, vocabulary split ${options.vocab}`;
  const single = Number.isNaN(mapePct.single) ? '' : `, single-node ${f(mapePct.single)}%`;
  const multi = Number.isNaN(mapePct.multi) ? '' : `, multi-node ${f(mapePct.multi)}%`;
  return [
    `vTrain measurement set: ${summary.rows} rows predicted in ${summary.wallS.toFixed(1)} s` +
      `${sensitivityNote(options)}${vocab}`,
    `MAPE: all ${f(mapePct.all)}%${single}${multi} (vTrain reports 8.37% and 14.73% for its own simulator)`,
    `mean signed error ${f(summary.meanSignedErrorPct)}% (negative: predictions too fast)`,
  ];
}

/** One of the worst rows: its setup, measured and predicted time. */
function worstRowLine(o: Outcome): string {
  const r = o.row;
  const setup = `${r.group} ${r.gpus} GPUs h${r.hidden} l${r.layers} tp${r.tp} pp${r.pp} dp${r.dp}`;
  return (
    `  ${setup} mb${r.microBatch} gb${r.globalBatch}: measured ${f(r.measuredMs)} ms, ` +
    `predicted ${f(o.predictedMs)} ms (${f(o.errorPct)}%)`
  );
}

/** The text form of the summary. */
function summaryLines(summary: VtrainSummary, options: VtrainOptions): string[] {
  return [
    ...headLines(summary, options),
    '',
    'per group (set, model, GPUs): rows, MAPE, mean signed error',
    ...summary.groups.map(
      (g) =>
        `  ${g.name.padEnd(34)} ${String(g.rows).padStart(4)}  ${f(g.mapePct).padStart(7)}%  ` +
        `${f(g.meanSignedErrorPct).padStart(8)}%`,
    ),
    '',
    'worst rows',
    ...summary.worst.map(worstRowLine),
  ];
}

/** Predicts the set and returns the text to print, ending in a newline. */
export async function runVtrainSet(options: VtrainOptions, progress: RowProgress): Promise<string> {
  const rows = vtrainRows(options.only, options.limit);
  const t0 = Date.now();
  const outcomes = await predictRows(rows, options, progress);
  const summary = vtrainSummary(outcomes, (Date.now() - t0) / 1e3, options.vocab);
  if (options.json) {
    // The decomposition as the lines the text prints (its figures are fits per family, read by people).
    const json = options.decompose ? { ...summary, decomposition: decompositionLines(outcomes) } : summary;
    return JSON.stringify(json, null, 2) + '\n';
  }
  const lines = summaryLines(summary, options);
  if (options.decompose) lines.push('', ...decompositionLines(outcomes));
  return lines.join('\n') + '\n';
}
