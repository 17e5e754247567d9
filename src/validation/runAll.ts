import type { RowProgress } from './rowProgress.js';
import { writeFileAtomic } from '../atomicWrite.js';
import { compiledWorker, defaultJobs, runTasks } from '../threads/taskPool.js';
import { table as formatTable } from '../report/textTable.js';
import { VERSION } from '../version.js';
import { kindWords } from '../accuracy/setupKind.js';
import { BAND_MIN_ROWS, PERCENTILE_MIN_ROWS } from '../accuracy/errorBand.js';
import { RESIDUALS_FILE, residualFileText, type StoredResidual } from '../accuracy/residualStore.js';
import { STEP_SET_DESCRIPTIONS, STEP_SETS, stepTasks, type StepSetName } from './stepSets.js';
import { predictStepTask, type StepPrediction, type StepTaskJob } from './stepTaskPredict.js';
import { allSetsSummary, setFigures, stepOutcome, type AllSetsSummary, type StepOutcome } from './allSetsSummary.js';
import { h200KernelRows } from './runH200Kernels.js';
import type { ValidateOptions } from './validateArgs.js';
import { FITTED_CONSTANTS, meanSquaredPct } from './fittedConstants.js';
import { FP8_SPEEDUP_TOLERANCE_PCT, fp8Pairs, type Fp8Pair } from './fp8Pairs.js';

/**
 * `npm run validate -- --all`: every published set predicted on one pool of threads; prints each set's rows, MAPE,
 * signed mean and worst row, how well the predictions rank the splits of one job, and the error band of each kind
 * of prediction; `--write-residuals` stores the residuals those bands rest on (accuracy/residualStore.ts).
 */

/** Sets whose tasks take longest go first, so that the threads finish together. */
const HAND_OUT_FIRST: readonly StepSetName[] = [
  'megatron-sc21',
  'megatron-sp22',
  'nemo-dgxc-h100',
  'nemo-dgxc-h100-fp8',
  'nemo-dgxc-gb200',
  'nemo-dgxc-gb200-fp8',
  'fms-fsdp-a100',
  'llm-foundry-fsdp',
];

/** Every set's tasks predicted on one pool of threads, the costliest handed out first. */
async function predictAll(
  limit: number,
  progress: RowProgress,
): Promise<{ outcomes: StepOutcome[]; wallS: number; threads: number }> {
  const tasks = stepTasks(STEP_SETS, limit);
  const job: StepTaskJob = { tasks };
  const ids = tasks.map((_, i) => i);
  const costly = (i: number) => HAND_OUT_FIRST.includes(tasks[i].set);
  const t0 = Date.now();
  const shown = progress(tasks.length);
  const { results, workers } = await runTasks<StepTaskJob, StepPrediction>({
    jobs: defaultJobs(),
    worker: compiledWorker(new URL('./stepTaskWorker.js', import.meta.url)),
    job,
    ids,
    handOut: [...ids.filter(costly), ...ids.filter((i) => !costly(i))],
    runHere: (i) => predictStepTask(job, i),
    onResult: (i) => shown.tick(`${tasks[i].set} row ${i + 1}`),
  });
  shown.stop();
  return {
    outcomes: tasks.map((t, i) => stepOutcome(t, results[i])),
    wallS: (Date.now() - t0) / 1e3,
    threads: workers + 1,
  };
}

function writeResiduals(outcomes: readonly StepOutcome[]): void {
  const indexInSet = new Map<string, number>();
  const rows: StoredResidual[] = outcomes.map((o) => {
    const index = indexInSet.get(o.set) ?? 0;
    indexInSet.set(o.set, index + 1);
    return {
      set: o.set,
      index,
      label: o.label,
      ...(o.rankGroup !== undefined ? { rankGroup: o.rankGroup } : {}),
      kind: o.kind,
      measuredS: o.measuredS,
      predictedS: o.predictedS,
    };
  });
  const text = residualFileText({ writtenBy: 'npm run validate -- --all --write-residuals', version: VERSION, rows });
  // Written whole or not at all: an interrupted run leaves the old file.
  writeFileAtomic(RESIDUALS_FILE, text);
}

const pct = (x: number, d = 1) => `${x >= 0 ? '+' : ''}${x.toFixed(d)}%`;

/** The FP8 speed-up of each pair, measured against predicted (the FP8 issue's target: within 5%). */
function fp8PairLines(pairs: readonly Fp8Pair[]): string[] {
  if (pairs.length === 0) return [];
  const rows = pairs.map((p) => [
    p.label,
    `${p.measuredSpeedup.toFixed(3)}×`,
    `${p.predictedSpeedup.toFixed(3)}×`,
    pct(p.errorPct),
  ]);
  const within = pairs.filter((p) => Math.abs(p.errorPct) <= FP8_SPEEDUP_TOLERANCE_PCT).length;
  return [
    '',
    'FP8 speed-up over bf16, the same run in both (nemo-dgxc-h100 and -fp8, nemo-dgxc-gb200 and -fp8):' +
      ' bf16 step time / FP8 step time',
    formatTable(['run', 'measured', 'predicted', 'error'], rows).replace(/^/gm, '  '),
    `  ${within} of ${pairs.length} within ${FP8_SPEEDUP_TOLERANCE_PCT}% of the measured speed-up`,
  ];
}

type AllSummary = AllSetsSummary & { fp8Pairs: Fp8Pair[] };
type SetFigures = ReturnType<typeof setFigures>;

/** Each set's rows, MAPE, signed mean and worst row, then what each set is. */
function setLines(s: AllSummary, kernels: SetFigures): string[] {
  const setRows = [...s.sets, kernels].map((f) => [
    f.set,
    f.rows,
    `${f.mapePct.toFixed(2)}%`,
    pct(f.meanSignedErrorPct, 2),
    `${pct(f.worst.errorPct)} ${f.worst.label}`,
  ]);
  const nameWidth = Math.max('h200-kernels'.length, ...s.sets.map((f) => f.set.length));
  const described = s.sets.map((f) => `  ${f.set.padEnd(nameWidth)} ${STEP_SET_DESCRIPTIONS[f.set as StepSetName]}`);
  return [
    formatTable(['set', 'rows', 'MAPE', 'signed mean', 'worst row'], setRows).replace(/^/gm, '  '),
    '',
    ...described,
    `  ${'h200-kernels'.padEnd(nameWidth)} attention kernels and Llama layers on one H200, GPU time` +
      ' (npm run validate -- --set h200-kernels)',
    '  signed: (predicted − measured) / measured of the step time (of the GPU time for h200-kernels);' +
      ' negative: too fast',
  ];
}

/** How well the predictions rank the splits of one job, per set. */
function rankingLines(s: AllSummary): string[] {
  const rankRows = s.ranking.map((r) => [
    r.set,
    r.groups,
    `${r.top1Right} (${Math.round((100 * r.top1Right) / r.groups)}%)`,
    `${(100 * r.meanRegret).toFixed(2)}%`,
    `${(100 * r.worstRegret).toFixed(1)}%`,
    r.meanTau.toFixed(2),
  ]);
  return [
    'ranking: each group is one model on one GPU count with one batch, run with different splits',
    formatTable(['set', 'groups', 'top-1 right', 'mean regret', 'worst regret', "Kendall's tau"], rankRows).replace(
      /^/gm,
      '  ',
    ),
    '  regret: measured time of the predicted-fastest split over the measured fastest, minus 1;' +
      ' tau-b, mean over groups',
  ];
}

/** The error band of each kind of prediction, as simulate and scale show them. */
function bandLines(s: AllSummary): string[] {
  const w = kindWords;
  const bandRows = s.bands.map(({ kind: k, band: b }) => [
    w.gpu(k.gpu) + (k.fp8 ? ', FP8' : '') + (k.moe ? ', MoE' : ''),
    w.style(k.style),
    w.scale(k.scale),
    w.host(k.host),
    b.rows,
    pct(b.lowPct),
    pct(b.medianPct),
    pct(b.highPct),
    b.rows < BAND_MIN_ROWS ? 'too few: broader' : b.edges === 'p10-p90' ? 'p10-p90' : 'min-max',
    b.sets.join(' '),
  ]);
  return [
    'error bands by kind of prediction: measured / predicted − 1 (positive: the real step was longer),' +
      ' low edge, median, high edge',
    formatTable(
      ['GPU', 'parallelism', 'nodes', 'host', 'rows', 'low', 'median', 'high', 'edges', 'sets'],
      bandRows,
    ).replace(/^/gm, '  '),
    `  edges: 10th and 90th percentile, or the extremes under ${PERCENTILE_MIN_ROWS} rows;` +
      ` a kind with fewer than ${BAND_MIN_ROWS} rows gets the band of a broader match in simulate and scale`,
  ];
}

function summaryLines(s: AllSummary, kernels: SetFigures): string[] {
  return [
    ...setLines(s, kernels),
    '',
    ...rankingLines(s),
    ...fp8PairLines(s.fp8Pairs),
    '',
    ...fittedConstantLines(),
    '',
    ...bandLines(s),
  ];
}

/**
 * The fitted constants, each with its training subset and its error there at 1 and at its value. None is fitted on a
 * set of step times, so every set above is out of sample for each (leave-one-set-out is the figures as printed), except
 * a set that shares a source with a constant's training subset, which is named.
 */
function fittedConstantLines(): string[] {
  const mape = (e: number[]) => `${(e.reduce((a, x) => a + Math.abs(x), 0) / e.length).toFixed(1)}%`;
  return [
    'fitted constants (each on its own training subset, none on a set of step times: those are out of sample for them)',
    ...FITTED_CONSTANTS.flatMap((c) => {
      const [at1, atValue] = [c.residualsAt(1), c.residualsAt(c.value)];
      const rms = Math.sqrt(meanSquaredPct(atValue)).toFixed(2);
      return [
        `  ${c.name} = ${c.value}: fitted on ${c.fittedOn}`,
        `    its error there ${mape(at1)} without it, ${mape(atValue)} with it (rms ${rms}%)` +
          (c.sharesSourceWith.length > 0 ? `; ${c.sharesSourceWith.join(', ')} holds or shares that source` : ''),
      ];
    }),
  ];
}

/** The summary of every set's outcomes, with the FP8 speed-ups of the runs done in both precisions. */
function summaryOf(outcomes: StepOutcome[]): AllSummary {
  return {
    ...allSetsSummary(outcomes),
    fp8Pairs: [
      ...fp8Pairs(outcomes, 'nemo-dgxc-h100', 'nemo-dgxc-h100-fp8'),
      ...fp8Pairs(outcomes, 'nemo-dgxc-gb200', 'nemo-dgxc-gb200-fp8'),
    ],
  };
}

/** The h200-kernels set, compared here (its rows are not step times), summarised as the others. */
function kernelFigures(limit: number): SetFigures {
  const kernelRows = h200KernelRows(limit);
  return setFigures(
    'h200-kernels',
    kernelRows.map((r) => ({ label: r.name, errorPct: r.errorPct, measuredS: r.measuredS, predictedS: r.predictedS })),
  );
}

/** What `--all --json` adds of the fitted constants: each with its training subset's errors at its value. */
function fittedConstantsJson() {
  return FITTED_CONSTANTS.map((c) => ({
    name: c.name,
    value: c.value,
    fittedOn: c.fittedOn,
    sharesSourceWith: c.sharesSourceWith,
    trainingErrorsPct: c.residualsAt(c.value),
  }));
}

/**
 * Predicts every set (writing the residuals with `writeResiduals`) and returns the text to print, ending in a newline
 * (`--json`: one JSON object).
 */
export async function runAllSets(
  options: Pick<ValidateOptions, 'limit' | 'json' | 'writeResiduals'>,
  progress: RowProgress,
): Promise<string> {
  const { outcomes, wallS, threads } = await predictAll(options.limit, progress);
  const summary = summaryOf(outcomes);
  const kernels = kernelFigures(options.limit);
  if (options.writeResiduals) writeResiduals(outcomes);
  if (options.json) {
    const json = { rows: outcomes.length, wallS, threads, ...summary, kernels, fittedConstants: fittedConstantsJson() };
    return JSON.stringify(json, null, 2) + '\n';
  }
  const head =
    `Every validation set: ${outcomes.length.toLocaleString('en-US')} step times predicted in ${wallS.toFixed(0)} s` +
    ` on ${threads} thread(s)`;
  const written = options.writeResiduals
    ? ['', `residuals written to data/validation-residuals.json (${outcomes.length} rows)`]
    : [];
  return [head, '', ...summaryLines(summary, kernels), ...written].join('\n') + '\n';
}
