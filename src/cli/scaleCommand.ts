import { Option, type Command } from 'commander';
import { loadScenarioFile } from '../scenario/load.js';
import { planSeries, type ScaleMode, type ScaleSeries } from '../sweep/scale.js';
import { parseGpuCounts } from '../sweep/scaleMath.js';
import { MAX_SWEEP_POINTS } from '../sweep/grid.js';
import { parseShard, ShardSyntaxError, type Shard } from '../sweep/grid.js';
import { jobsHelp, parseJobs } from './jobsOption.js';
import { recordLines } from '../sweep/records.js';
import { INTERRUPTED_REASON, runScaleShard, runScaleSweep } from '../sweep/sweep.js';
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
import { checkOutputFiles, commandLineInputs, writeReportFile } from './reportFiles.js';
import type { Output } from './output.js';
import { InterruptedError, UsageError } from './usageError.js';
import { onInterrupt } from './calibrateCommand.js';
import { sweepProgress } from './sweepProgress.js';
import type { Scenario } from '../scenario/resolve.js';
import { anySimulated, writeScaleOutputs, type FileWarning } from './scaleOutput.js';

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
