import { Option, type Command } from 'commander';
import { withErrorBand } from '../accuracy/bandText.js';
import { storedResiduals } from '../accuracy/residualStore.js';
import { loadScenarioFile } from '../scenario/load.js';
import { planSeries, type ScaleMode, type ScaleSeries } from '../sweep/scale.js';
import { isSimulated, parseGpuCounts, scalingBaseGpus } from '../sweep/scaleMath.js';
import { MAX_SWEEP_POINTS } from '../sweep/grid.js';
import { parallelSizesText } from '../report/format.js';
import { parseShard, ShardSyntaxError, type Shard } from '../sweep/grid.js';
import { jobsHelp, parseJobs } from './jobsOption.js';
import { recordLines } from '../sweep/records.js';
import { pickCommSettings } from '../sweep/commSettings.js';
import { INTERRUPTED_REASON, runScaleShard, runScaleSweep } from '../sweep/sweep.js';
import { SCALE_TABLE_HEADER, scaleCsv, scaleTableRows } from '../report/scaleTable.js';
import type { ScaleView } from '../report/reports.js';
import { VERSION } from '../version.js';
import { collect } from './scenarioInput.js';
import {
  applyImports,
  explainProblems,
  importsOf,
  pinnedAccumulationSteps,
  scenarioWithImports,
  type ImportOptions,
} from '../scenario/importSettings.js';
import { InvalidScenarioError } from '../scenario/errors.js';
import { checkOutputFiles, commandLineInputs, loadReports, stepView, writeReportFile } from './reportFiles.js';
import type { Output } from './output.js';
import { InterruptedError, UsageError } from './usageError.js';
import { onInterrupt } from './calibrateCommand.js';
import { sweepProgress } from './sweepProgress.js';
import type { Scenario } from '../scenario/resolve.js';

interface ScaleOptions extends ImportOptions {
  gpus?: string;
  mode: ScaleMode;
  set: string[];
  csv?: string;
  svg?: string;
  report?: string;
  json?: boolean;
  compare?: string[];
  jobs?: string;
  shard?: string;
  out?: string;
}

/** Reads `--shard i/N`, or nothing. */
function shardOption(text: string | undefined): Shard | undefined {
  if (text === undefined) return undefined;
  try {
    return parseShard(text);
  } catch (err) {
    if (err instanceof ShardSyntaxError) throw new UsageError(`--shard: ${err.message}`);
    throw err;
  }
}

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

/** Default GPU counts: doubling from one node up to the scenario's own size (at least two sizes). */
function defaultGpuCounts(s: Scenario): number[] {
  const perNode = s.cluster.node.gpusPerNode;
  const total = s.cluster.nodes * perNode;
  const out: number[] = [];
  for (let g = perNode; g <= Math.max(total, 2 * perNode); g *= 2) out.push(g);
  return out;
}

/** Examples of --help too long for one line here. */
const MEGATRON_EXAMPLE =
  'clustersim scale scenarios/imports/gpt3-175b-a100.yaml --megatron-args @scenarios/imports/megatron-args.txt ' +
  '--set training.globalBatch=128 --gpus 256,512,1024';
const SLURM_EXAMPLE =
  'clustersim scale a.yaml --gpus 8..8192 --shard $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT ' +
  '--out part-$SLURM_ARRAY_TASK_ID.jsonl';

export function registerScale(program: Command, io: Output): void {
  program
    .command('scale')
    .description(
      'simulate a scenario at several GPU counts and show how it scales (table, CSV, JSON, SVG chart, HTML report)',
    )
    .argument('<scenario>', 'scenario file (YAML or JSON)')
    .option(
      '--gpus <list>',
      'GPU counts: 8,16,32 or a doubling range 8..1024 (default: ' +
        "one node, then doubling while within the scenario's size; at least two sizes, 8,16 for one 8-GPU node)",
    )
    .addOption(
      new Option('--mode <mode>', 'strong: keep the global batch; weak: keep the batch per data-parallel replica')
        .choices(['strong', 'weak'])
        .default('strong'),
    )
    .option(
      '--set <path=value>',
      'override a scenario field before scaling (repeatable; applies to --compare files too)',
      collect,
      [],
    )
    .option('--compare <files...>', 'more scenarios to sweep and overlay on the same chart')
    .option(
      '--megatron-args <args>',
      'build the strategy (and model/training where given) from a Megatron-LM command line, as pasted, ' +
        'or @file holding it (applies to --compare files too; each sweep size derives its own dp)',
    )
    .option(
      '--deepspeed-config <file>',
      'take batch sizes, ZeRO stage, buckets, overlap, offload and precision from a DeepSpeed ds_config.json ' +
        '(applies to --compare files too)',
    )
    .option('--csv <file.csv>', 'write the rows of every scenario as CSV')
    .option('--svg <file.svg>', 'write the scaling chart (throughput and efficiency against GPUs)')
    .option(
      '--report <file.html>',
      'write a self-contained HTML report (curves, tables, timeline and memory of the largest size)',
    )
    .option(
      '--json',
      'print { version, mode, series: [{ name, source, tp, pp, cp?, cpCommType?, tpCommOverlap?, tpCommOverlapSms?, ' +
        'scalingBaseGpus?, rows }], warnings? } instead of tables',
    )
    .option('--jobs <n>', jobsHelp('the sizes'))
    .option(
      '--shard <i/N>',
      'run only part i of N (1 ≤ i ≤ N; points dealt round-robin) ' +
        'and print its results as JSON lines for clustersim merge',
    )
    .option('--out <file.jsonl>', 'with --shard: write the JSON lines to this file instead of stdout')
    .addHelpText(
      'after',
      `
Sizes that cannot be built (not whole nodes, a batch that does not divide) are rows with a reason;
sizes that do not fit in memory are simulated and marked OOM. The sizes run in parallel, one thread
per core; the output is the same as with --jobs 1. Ctrl-C stops after the sizes in flight: the output
shows those done and marks the rest (a part, --shard, writes the points done), exit code 130.

A sweep too large for one machine can be split: --shard i/N runs part i of N (the points, scenario by
scenario and GPU count by GPU count, dealt round-robin) and writes one JSON line per point; clustersim
merge joins the parts into the same table, JSON, CSV or chart as one run.

Examples:
  $ clustersim scale scenarios/llama2-7b-ddp-16node.yaml --gpus 8..1024 --mode weak
  $ clustersim scale scenarios/bert-large-ddp-2node.yaml --gpus 8,16,32 --csv scale.csv --svg scale.svg
  $ clustersim scale a.yaml --compare b.yaml c.yaml --gpus 16..256 --report scale.html
  $ ${MEGATRON_EXAMPLE}
  $ ${SLURM_EXAMPLE}
  $ clustersim merge part-*.jsonl --csv scale.csv`,
    )
    .action(async (file: string, opts: ScaleOptions) => {
      let gpus: number[];
      const files = [file, ...(opts.compare ?? [])];
      // Without --gpus the main file, as given, sets the default sizes (so it must be valid at its own size); with
      // --gpus no file need be. Warnings come from the plans below, one per file, the reference each is swept from.
      const asGiven = opts.gpus === undefined ? scenarioWithImports(file, opts, opts.set).scenario : undefined;
      try {
        gpus = opts.gpus === undefined ? defaultGpuCounts(asGiven!) : parseGpuCounts(opts.gpus);
      } catch (err) {
        if (err instanceof RangeError) throw new UsageError(`--gpus: ${err.message}`);
        throw err;
      }
      if (files.length * gpus.length > MAX_SWEEP_POINTS)
        throw new UsageError(
          `--gpus: ${files.length} scenarios × ${gpus.length} GPU counts = ${files.length * gpus.length} points, ` +
            `more than the ${MAX_SWEEP_POINTS} a sweep may have; name fewer sizes`,
        );
      const jobs = parseJobs(opts.jobs, 'the sweep');
      const shard = shardOption(opts.shard);
      if (shard) {
        const outputs = (['json', 'csv', 'svg'] as const).filter((o) => opts[o]).map((o) => `--${o}`);
        if (outputs.length > 0)
          throw new UsageError(
            `${outputs.join(', ')}: a part (--shard) writes JSON lines only; ` +
              `give ${outputs.join(', ')} to clustersim merge once all parts are done`,
          );
        // The report draws the largest point's timeline and memory, which a part's lines do not carry.
        if (opts.report)
          throw new UsageError(
            '--report: a part (--shard) writes JSON lines only, and merge writes tables and the chart (--json, ' +
              '--csv, --svg), not the HTML report; run the sweep without --shard for it',
          );
      } else if (opts.out !== undefined) {
        throw new UsageError(
          '--out: only with --shard (it names the JSON-lines file of the part); ' +
            'use --json, --csv, --svg or --report for a whole sweep',
        );
      }
      checkOutputFiles(
        [
          [opts.csv, '--csv'],
          [opts.svg, '--svg'],
          [opts.report, '--report'],
          [opts.out, '--out'],
        ],
        commandLineInputs(files, opts),
      );
      // Every scenario is checked before anything runs, so a bad --compare file fails at once. Each file's warnings are
      // printed as it is read, also for a file not valid at its own size but swept from the fewest nodes that hold its
      // split; with several files each warning names its file.
      const warnings: FileWarning[] = [];
      const plans = files.map((f) => {
        const warn = (message: string) => {
          warnings.push({ file: f, message });
          io.err(`clustersim: warning: ${files.length > 1 ? `${f}: ` : ''}${message}`);
        };
        // --megatron-args and --deepspeed-config as simulate applies them, then --set; each size resolves the result.
        const loaded = loadScenarioFile(f);
        const imports = importsOf(loaded, opts, opts.set, warn);
        let plan: ReturnType<typeof planSeries>;
        try {
          plan = planSeries({ ...loaded, raw: applyImports(loaded.raw, imports) }, opts.mode, opts.set);
        } catch (err) {
          throw err instanceof InvalidScenarioError ? explainProblems(err, loaded, imports, opts.set) : err;
        }
        for (const message of plan.warnings) warn(message);
        const steps =
          opts.deepspeedConfig !== undefined && opts.mode === 'strong'
            ? pinnedAccumulationSteps(opts.deepspeedConfig)
            : undefined;
        if (steps !== undefined) {
          warn(
            `--deepspeed-config: gradient_accumulation_steps ${steps} holds at one data-parallel size only; ` +
              'strong scaling keeps the global batch and the micro-batch the config gives, so each size accumulates ' +
              'what they leave (DeepSpeed would need the config rewritten, or "auto", per size)',
          );
        }
        return plan;
      });
      const label = (series: number, g: number) => `${plans[series].source} at ${g} GPUs`;

      if (shard) {
        const total = plans.length * gpus.length;
        const progress = sweepProgress(
          io,
          `part ${shard.index}/${shard.count}`,
          Math.ceil(Math.max(0, total - shard.index + 1) / shard.count),
        );
        let part: Awaited<ReturnType<typeof runScaleShard>>;
        // Ctrl-C stops the part after the points in flight and keeps those done, as calibrate keeps its measurements.
        const controller = new AbortController();
        const removeHandler = onInterrupt(io, controller, `part ${shard.index}/${shard.count}`, 'the points in flight');
        try {
          part = await runScaleShard(plans, gpus, opts.mode, shard, {
            jobs,
            onPoint: (p) => progress.tick(label(p.series, p.gpus)),
            signal: controller.signal,
          });
        } finally {
          progress.stop();
          removeHandler();
        }
        const text = recordLines(part.records);
        if (opts.out !== undefined) writeReportFile(opts.out, text, io);
        else if (text !== '') io.out(text);
        if (part.interrupted) {
          throw new InterruptedError(
            `part ${shard.index}/${shard.count} interrupted: ${part.records.length} of its ${part.planned} points ` +
              `were done${opts.out !== undefined ? ` and are in ${opts.out}` : ''}; ` +
              'merge refuses a part with points missing, so run the part again to complete it',
          );
        }
        if (part.records.length === 0)
          io.err(
            `part ${shard.index}/${shard.count} holds no points (the sweep has ${part.points}); ` +
              'merge accepts its empty output',
          );
        return;
      }

      const progress = sweepProgress(io, 'scale', plans.length * gpus.length);
      let series: ScaleSeries[];
      let interrupted: boolean;
      // Ctrl-C stops the sweep after the sizes in flight; the table shows what was done, the rest marked.
      const controller = new AbortController();
      const removeHandler = onInterrupt(io, controller, 'scale', 'the sizes in flight');
      try {
        ({ series, interrupted } = await runScaleSweep(plans, gpus, {
          jobs,
          keepLargest: opts.report !== undefined,
          onPoint: (p) => progress.tick(label(p.series, p.gpus)),
          signal: controller.signal,
        }));
      } finally {
        progress.stop();
        removeHandler();
      }
      if (interrupted && !anySimulated(series))
        throw new InterruptedError('scale interrupted before any size was simulated; nothing written');
      await writeScaleOutputs(series, opts.mode, opts, io, `clustersim ${VERSION} scale --mode ${opts.mode}`, warnings);
      if (interrupted) {
        const moved = series
          .filter((s) => s.scalingBaseGpus !== undefined)
          .map((s) => `${s.name}'s against ${s.scalingBaseGpus} GPUs`);
        const base =
          moved.length > 0
            ? '; speed-up and efficiency are against the smallest size simulated that fits, ' +
              `not the smallest asked for: ${moved.join(', ')}`
            : '';
        throw new InterruptedError(
          `scale interrupted: the sizes not simulated are rows marked '${INTERRUPTED_REASON}' (status ` +
            `interrupted)${base}`,
        );
      }
    });
}

/** Whether any size of the sweep was simulated (rows that could not be built, or were left out, are infeasible). */
function anySimulated(series: readonly ScaleSeries[]): boolean {
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
