import { rowProgress } from './rowProgress.js';
import { readFileSync } from 'node:fs';
import { compiledWorker, defaultJobs, runTasks } from '../threads/taskPool.js';
import { mape, meanSignedErrorPct, parseVtrainCsv, VTRAIN_DATA_DIR, type VtrainRow } from './vtrain.js';
import { predictVtrainRow, type VtrainJob } from './vtrainPredict.js';
import { decompositionLines } from './decompositionReport.js';
import type { Outcome as PredictedRow } from './families.js';
import { runMegatronSc21 } from './runMegatronSc21.js';
import { runMegatronSp22 } from './runMegatronSp22.js';
import { runH200Kernels } from './runH200Kernels.js';
import { runAllSets } from './runAll.js';
import { runFit } from './runFit.js';
import { VALIDATE_USAGE, type ValidateOptions } from './validateArgs.js';

/**
 * `clustersim check-published` (`npm run validate`): predicts the rows of a published measurement set and prints the
 * error; without options the vTrain set (`runVtrainSet`), `--all` every set (runAll.ts), `--set megatron-sc21` and the
 * others one set each. Options and their checks: validateArgs.ts (`--help`).
 */
export async function runPublishedCheck(options: ValidateOptions): Promise<void> {
  if (options.help) process.stdout.write(VALIDATE_USAGE + '\n');
  else if (options.all) await runAllSets(options);
  else if (options.fit) runFit(options);
  else if (options.set === 'megatron-sc21') runMegatronSc21(options);
  else if (options.set === 'megatron-sp22') runMegatronSp22(options);
  else if (options.set === 'h200-kernels') runH200Kernels(options);
  else await runVtrainSet(options);
}

/** A predicted row (families.ts) with its signed error. */
interface Outcome extends PredictedRow {
  errorPct: number;
}

/** What a sensitivity run sets in place of the cited host costs, for the first line of the output. */
function sensitivityNote(o: ValidateOptions): string {
  const set = [
    o.hostOpUs === undefined ? '' : `training.hostOpUs = ${o.hostOpUs} µs`,
    o.hostCollectiveUs === undefined ? '' : `training.hostCollectiveUs = ${o.hostCollectiveUs} µs`,
  ].filter((x) => x !== '');
  return set.length === 0 ? '' : ` (sensitivity run: ${set.join(', ')})`;
}

/** The vTrain set: MAPE overall, per set and per (model size, GPU count) group, and the worst rows. */
async function runVtrainSet(options: ValidateOptions): Promise<void> {
  const { only, limit } = options;
  const dataDir = VTRAIN_DATA_DIR;

  const rows: VtrainRow[] = [];
  for (const group of ['single', 'multi'] as const) {
    if (only && only !== group) continue;
    rows.push(...parseVtrainCsv(readFileSync(`${dataDir}vtrain-${group}-node.csv`, 'utf8'), group).slice(0, limit));
  }
  const t0 = Date.now();
  const job: VtrainJob = {
    rows,
    opts: { hostOpUs: options.hostOpUs, hostCollectiveUs: options.hostCollectiveUs, vocab: options.vocab },
  };
  const progress = rowProgress(rows.length);
  const { results } = await runTasks<VtrainJob, number>({
    jobs: defaultJobs(),
    worker: compiledWorker(new URL('./vtrainWorker.js', import.meta.url)),
    job,
    ids: rows.map((_, i) => i),
    runHere: (i) => predictVtrainRow(job, i),
    onResult: (i) => progress.tick(`row ${i + 1}`),
  });
  const outcomes: Outcome[] = rows.map((row, i) => ({
    row,
    predictedMs: results[i],
    errorPct: (100 * (results[i] - row.measuredMs)) / row.measuredMs,
  }));
  progress.stop();

  const pairs = (xs: Outcome[]) => xs.map((o) => ({ predicted: o.predictedMs, measured: o.row.measuredMs }));
  const byGroup = new Map<string, Outcome[]>();
  for (const o of outcomes) {
    const size = o.row.paramsB !== undefined ? `${o.row.paramsB}B` : `h${o.row.hidden} l${o.row.layers}`;
    const k = `${o.row.group} ${size} ${o.row.gpus} GPUs`;
    byGroup.set(k, [...(byGroup.get(k) ?? []), o]);
  }
  const summary = {
    rows: outcomes.length,
    wallS: (Date.now() - t0) / 1e3,
    vocab: options.vocab,
    mapePct: {
      all: mape(pairs(outcomes)),
      single: mape(pairs(outcomes.filter((o) => o.row.group === 'single'))),
      multi: mape(pairs(outcomes.filter((o) => o.row.group === 'multi'))),
    },
    meanSignedErrorPct: meanSignedErrorPct(outcomes),
    groups: [...byGroup.entries()].map(([name, os]) => ({
      name,
      rows: os.length,
      mapePct: mape(pairs(os)),
      meanSignedErrorPct: meanSignedErrorPct(os),
    })),
    worst: [...outcomes].sort((a, b) => Math.abs(b.errorPct) - Math.abs(a.errorPct)).slice(0, 10),
  };
  if (options.json) {
    // The decomposition as the lines the text prints (its figures are fits per family, read by people).
    process.stdout.write(
      JSON.stringify(
        options.decompose ? { ...summary, decomposition: decompositionLines(outcomes) } : summary,
        null,
        2,
      ) + '\n',
    );
  } else {
    const f = (x: number) => x.toFixed(2);
    const lines = [
      `vTrain measurement set: ${summary.rows} rows predicted in ${summary.wallS.toFixed(1)} s${sensitivityNote(options)}${options.vocab === 'peer' ? '' : `, vocabulary split ${options.vocab}`}`,
      `MAPE: all ${f(summary.mapePct.all)}%${Number.isNaN(summary.mapePct.single) ? '' : `, single-node ${f(summary.mapePct.single)}%`}${Number.isNaN(summary.mapePct.multi) ? '' : `, multi-node ${f(summary.mapePct.multi)}%`} (vTrain reports 8.37% and 14.73% for its own simulator)`,
      `mean signed error ${f(summary.meanSignedErrorPct)}% (negative: predictions too fast)`,
      '',
      'per group (set, model, GPUs): rows, MAPE, mean signed error',
      ...summary.groups.map(
        (g) =>
          `  ${g.name.padEnd(34)} ${String(g.rows).padStart(4)}  ${f(g.mapePct).padStart(7)}%  ${f(g.meanSignedErrorPct).padStart(8)}%`,
      ),
      '',
      'worst rows',
      ...summary.worst.map(
        (o) =>
          `  ${o.row.group} ${o.row.gpus} GPUs h${o.row.hidden} l${o.row.layers} tp${o.row.tp} pp${o.row.pp} dp${o.row.dp} mb${o.row.microBatch} gb${o.row.globalBatch}: measured ${f(o.row.measuredMs)} ms, predicted ${f(o.predictedMs)} ms (${f(o.errorPct)}%)`,
      ),
    ];
    if (options.decompose) lines.push('', ...decompositionLines(outcomes));
    process.stdout.write(lines.join('\n') + '\n');
  }
}
