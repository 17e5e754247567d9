import { Option, type Command } from 'commander';
import { simulateStep, type StepResult } from '../sim/simulateStep.js';
import { VERSION } from '../version.js';
import { formatBytes, formatSeconds } from './units.js';
import { strategyText, tflopsText } from '../report/format.js';
import { collect } from './scenarioInput.js';
import {
  applyImports,
  describeImports,
  importsJson,
  scenarioWithImports,
  type ImportOptions,
} from '../scenario/importSettings.js';
import { applyOverrides } from '../scenario/load.js';
import { processOutput, type Output } from './output.js';
import { alternativesFor, formatAdvice } from './adviceOutput.js';
import { jobsHelp, parseJobs } from './jobsOption.js';
import { stepProgress } from './stepProgress.js';
import { UsageError } from './usageError.js';
import {
  addStepFileOptions,
  checkStepFileOptions,
  commandLineInputs,
  stepFilesView,
  writeStepFiles,
  type StepFileOptions,
} from './reportFiles.js';
import { applyProfileOption } from './calibrateCommand.js';
import { hostMemoryVerdict } from '../report/summary.js';
import { describeOptimizerState } from '../sim/memory/optimizerState.js';
import type { AttentionSummary } from '../sim/workload/attentionKernels.js';
import { setupKind, type SetupKind } from '../accuracy/setupKind.js';
import { errorBandFor, type ErrorBand } from '../accuracy/errorBand.js';
import { bandBasis, bandJson, bandRangeText } from '../accuracy/bandText.js';
import { storedResiduals } from '../accuracy/residualStore.js';
import { SUMMARY_WIDTH, wrapAfter, wrapItems, wrapWords } from '../report/format.js';
import type { Dtype, GpuSpec } from '../sim/hardware/types.js';
import { precisionInfo } from '../sim/parallel/stepContext.js';
import { ASSUMED_SUSTAINED_GEMM_FRACTION, SUSTAINED_GEMM_FRACTION } from '../sim/hardware/sustainedGemm.js';
import { ARCHITECTURE_TRAITS, architectureOf } from '../sim/hardware/architectures.js';

/** The `--json` document of `simulate`: the result plus the version that made it. */
export function simulateJson(result: StepResult): Record<string, unknown> {
  return { version: VERSION, ...result };
}

function pct(part: number, whole: number): string {
  return `${((100 * part) / whole).toFixed(1)}%`;
}

/** The attention kernel and the share of the peak its passes reach (or, memory-efficient, its time over unfused). */
function attentionLine(a: AttentionSummary): string {
  if (a.timeOverUnfused) {
    const { forward, backward } = a.timeOverUnfused;
    return (
      `${a.label} (unfused attention's time × ${forward} forward, × ${backward} backward, xFormers' V100 medians; ` +
      'no s×s matrix kept)'
    );
  }
  const fractions =
    `${Math.round(100 * a.forwardEfficiency!)}% / ${Math.round(100 * a.backwardEfficiency!)}% of peak ` +
    'forward / backward';
  const caveat =
    a.figures === 'stand-in'
      ? ', its A100 figures: none published for this GPU'
      : a.figures === 'derived'
        ? `, ${a.derivedFrom}`
        : '';
  return `${a.label} (${fractions}${caveat})`;
}

/** A prediction's kind and its error band (accuracy/errorBand.ts); absent band: no comparable validated row. */
export interface StepBand {
  kind: SetupKind;
  band: ErrorBand | undefined;
}

/** The kind of prediction a scenario asks for and its band from the stored validation residuals. */
export function stepBand(scenario: Parameters<typeof setupKind>[0]): StepBand {
  const kind = setupKind(scenario);
  return { kind, band: errorBandFor(kind, storedResiduals()) };
}

/** The error band lines under the step time, wrapped to the summary's width. */
function bandLines(b: StepBand): string[] {
  const [first, ...rest] = wrapWords(bandBasis(b.kind, b.band), 92);
  return [`  error band          ${first}`, ...rest.map((l) => `                      ${l}`)];
}

/**
 * The GEMM rate the step assumes, when the GPU carries a sustained fraction: its burst ceiling and the fraction of it
 * a training step sustains (sustainedGemm.ts), a fitted constant that moves every compute-bound step by about 10%.
 */
export function gemmRateLine(gpu: GpuSpec, dtype: Dtype): string | undefined {
  const burst = gpu.gemmCeiling[dtype];
  if (gpu.sustainedGemmFraction === undefined || burst === undefined || gpu.measuredGemm?.[dtype]) return undefined;
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  const why = sustainedFractionBasis(gpu, gpu.sustainedGemmFraction);
  return wrapAfter(
    '  GEMM ceiling        ',
    `${pct(burst * gpu.sustainedGemmFraction)} of peak: ` +
      `a burst ceiling of ${pct(burst)} × ${gpu.sustainedGemmFraction} sustained in a step (${why})`,
  ).join('\n');
}

/** Where a GPU's sustained GEMM fraction comes from, in words. */
function sustainedFractionBasis(gpu: GpuSpec, fraction: number): string {
  const arch = architectureOf(gpu);
  const own = (SUSTAINED_GEMM_FRACTION as Partial<Record<string, number>>)[arch];
  if (own === fraction) return 'fitted per GPU generation';
  if (own === undefined && fraction === ASSUMED_SUSTAINED_GEMM_FRACTION)
    return `Hopper's fitted value, assumed: no ${ARCHITECTURE_TRAITS[arch].label} runs are validated`;
  return 'as the scenario sets it; the error band is of the fitted value';
}

/** The human-readable summary of one simulated step. */
export function formatStepSummary(
  r: StepResult,
  scenario: { clusterName: string; modelName: string; gemmRate?: string },
  band?: StepBand,
): string {
  const m = r.memory;
  const stateText = m.optimizerState ? ` (${describeOptimizerState(m.optimizerState)})` : '';
  /** A time of the step, right-aligned, and its share of the step. */
  const timeShare = (s: number) => `${formatSeconds(s).padStart(10)}  ${pct(s, r.stepTimeS)}`;
  const hiddenShare = pct(r.breakdown.commS - r.breakdown.exposedCommS, Math.max(r.breakdown.commS, 1e-30));
  const lines = [
    `${r.name}: ${scenario.modelName} on ${scenario.clusterName} (${r.gpus} ${r.gpus === 1 ? 'GPU' : 'GPUs'}), ` +
      `seed ${r.seed}`,
    `  split               ${strategyText(r.parallel)}`,
    ...(r.attention ? [`  attention           ${attentionLine(r.attention)}`] : []),
    ...(scenario.gemmRate ? [scenario.gemmRate] : []),
    '',
    '  step time           ' +
      `${formatSeconds(r.stepTimeS)}${band ? `, ${bandRangeText(band.band, r.stepTimeS, formatSeconds)}` : ''}`,
    ...(band ? bandLines(band) : []),
    `  throughput          ${r.samplesPerS.toFixed(1)} samples/s, ` +
      `${Math.round(r.tokensPerS).toLocaleString('en-US')} tokens/s`,
    `  per GPU             ${tflopsText(r.tflopsPerGpu)} TFLOP/s model, ` +
      `${tflopsText(r.hardwareTflopsPerGpu)} TFLOP/s hardware`,
    `  MFU                 ${(100 * r.mfu).toFixed(1)}%`,
    '',
    `  memory per GPU      ${formatBytes(m.peakBytesPerGpu)} of ${formatBytes(m.capacityBytes)}: ` +
      `${m.gpuFits ? 'fits' : `OOM, short by ${formatBytes(m.shortfallBytes)}`}`,
    `    weights ${formatBytes(m.breakdown.weightsBytes)}, gradients ${formatBytes(m.breakdown.gradientsBytes)}, ` +
      `optimizer ${formatBytes(m.breakdown.optimizerBytes)}${stateText},`,
    `    activations ${formatBytes(m.breakdown.activationsBytes)}, buffers ${formatBytes(m.breakdown.buffersBytes)}, ` +
      `runtime reserve ${formatBytes(m.breakdown.reserveBytes)}`,
    ...(m.perStage.length > 1
      ? wrapItems(
          '    per stage: ',
          m.perStage.map((s) => `${s.stage}: ${formatBytes(s.totalBytes)}${s.fits ? '' : ' OOM'}`),
        )
      : []),
    ...(hostMemoryVerdict(r)
      ? [
          `  host memory         ${hostMemoryVerdict(r)} (CPU offload: ` +
            'optimizer state, fp32 gradients, 16-bit partitions)',
        ]
      : []),
    '',
    '  where the time went (mean over GPUs)',
    `    compute                ${timeShare(r.breakdown.computeS)}`,
    `    exposed communication  ${timeShare(r.breakdown.exposedCommS)}`,
    ...(r.parallel.pp > 1 ? [`    pipeline bubble        ${timeShare(r.breakdown.bubbleS)}`] : []),
    ...(r.breakdown.hostOptimizerS > 0 ? [`    optimizer on the host  ${timeShare(r.breakdown.hostOptimizerS)}`] : []),
    `    idle                   ${timeShare(r.breakdown.idleS)}`,
    `    (communication busy ${formatSeconds(r.breakdown.commS)}, ${hiddenShare} of it hidden behind compute)`,
    '',
    ...wrapAfter(
      '  ',
      `${r.microBatchesPerStep} micro-batch(es) per step` +
        // Without data parallelism (over dp × cp) no gradient is reduced, so there are no buckets to speak of.
        (r.parallel.dp * r.parallel.cp > 1 ? `; ${bucketsText(r)}` : '') +
        (r.gradientAllReduce
          ? `; gradient reduction: ${r.gradientAllReduce.algorithm}/${r.gradientAllReduce.protocol}`
          : ''),
      SUMMARY_WIDTH,
      '    ',
    ),
    ...r.notes.flatMap((n) => wrapAfter('  note: ', n)),
  ];
  return lines.join('\n');
}

/** Examples of --help too long for one line here. */
const MEGATRON_EXAMPLE =
  'clustersim simulate scenarios/imports/gpt3-175b-a100.yaml --megatron-args "--tensor-model-parallel-size 8 ' +
  '--pipeline-model-parallel-size 16 --sequence-parallel --bf16"';
const FILES_EXAMPLE =
  'clustersim simulate scenarios/bert-large-ddp-2node.yaml --fidelity full --timeline step.svg --report step.html ' +
  '--trace step.json --ranks 0,8';
const INTERLEAVED_EXAMPLE =
  'clustersim simulate scenarios/llama2-13b-tp8-nvswitch.yaml --set parallel.tp=2 --set parallel.pp=4 ' +
  '--set parallel.schedule=interleaved --set parallel.virtualStages=5';

export function registerSimulate(program: Command, io: Output): void {
  const cmd = program
    .command('simulate')
    .description('simulate one training step of a scenario and summarise it')
    .argument('<scenario>', 'scenario file (YAML or JSON)')
    .option(
      '--set <path=value>',
      'override a scenario field (repeatable), e.g. --set parallel.ddp.bucketMB=5',
      collect,
      [],
    )
    .option('--json', 'print the result as one JSON object')
    .option(
      '--megatron-args <args>',
      'build the strategy (and model/training where given) from a Megatron-LM command line, as pasted, ' +
        'or @file holding it',
    )
    .option(
      '--deepspeed-config <ds_config.json>',
      'take batch sizes, ZeRO stage, buckets, overlap, offload and precision from a DeepSpeed config',
    )
    .addOption(
      new Option(
        '--fidelity <f>',
        'symmetric: one data-parallel replica simulated, the rest as shadow traffic; full: every rank',
      ).choices(['symmetric', 'full']),
    )
    .option('--alternatives <n>', 'simulate up to n promising changes and show them next to the result (0: none)', '3')
    .option('--jobs <n>', jobsHelp('the alternatives'))
    .option(
      '--profile <profile.json>',
      'use the constants `clustersim calibrate` measured, for the GPU and links the profile describes',
    )
    .addHelpText(
      'after',
      `
Examples:
  $ clustersim simulate scenarios/bert-large-ddp-2node.yaml
  $ clustersim simulate scenarios/llama2-7b-ddp-16node.yaml --json
  $ clustersim simulate scenarios/bert-large-ddp-2node.yaml --set parallel.ddp.bucketMB=5 --set comm.mode=step
  $ ${MEGATRON_EXAMPLE}
  $ clustersim simulate scenarios/imports/llama2-7b-a100-1node.yaml --deepspeed-config scenarios/imports/ds_config.json
  $ ${FILES_EXAMPLE}
  $ ${INTERLEAVED_EXAMPLE}
  $ clustersim simulate scenarios/llama2-70b-zero2-8xa100.yaml --alternatives 5 --jobs 2

The alternatives are whole simulations again; they run side by side, one thread per core (--jobs), and the
output is the same whatever --jobs says.

Scenario fields: cluster, model, training, comm, noise, simulation and parallel; docs/scenarios.md lists
every one with its values. The parallel ones used most: tp, pp, dp, cp, schedule (gpipe | 1f1b |
interleaved), virtualStages, sequenceParallel, recompute (none | selective | full), zero (0-3), offload
(none | cpu), ddp.{bucketMB, overlap}, layersPerStage. --set path=value overrides any field; the value is
read as YAML, and null takes the field out (its default applies).`,
    );
  addStepFileOptions(cmd).action(
    async (
      file: string,
      opts: {
        set: string[];
        json?: boolean;
        profile?: string;
        alternatives: string;
        fidelity?: string;
        jobs?: string;
      } & ImportOptions &
        StepFileOptions,
    ) => {
      const sets = opts.fidelity ? [...opts.set, `simulation.fidelity=${opts.fidelity}`] : opts.set;
      const { scenario: imported, imports } = scenarioWithImports(file, opts, sets, (w) =>
        io.err(`clustersim: warning: ${w}`),
      );
      const { scenario, profile } = applyProfileOption(imported, opts.profile, io);
      checkStepFileOptions(scenario, opts, commandLineInputs([file], opts));
      const alternativeCount = parseCount(opts.alternatives, '--alternatives');
      const jobs = parseJobs(opts.jobs, 'the alternatives');
      const progress = stepProgress(io, 'simulate');
      let run: ReturnType<typeof simulateStep>;
      try {
        run = simulateStep(scenario, { onProgress: progress.update });
      } finally {
        progress.stop();
      }
      const view = stepFilesView(
        scenario,
        run,
        opts,
        io,
        profile ? { file: profile.file, applied: profile.applied } : undefined,
      );
      const { result } = run;
      const band = stepBand(scenario);
      const adjust = (raw: unknown) => applyOverrides(applyImports(raw, imports), sets);
      // Each alternative is a whole simulation again: say which one is running, on a terminal.
      const showing = io === processOutput && process.stderr.isTTY;
      const announce = showing
        ? (label: string) => io.err(`clustersim: simulating an alternative: ${label} (--alternatives 0 to skip)`)
        : undefined;
      const alternatives = await alternativesFor(file, adjust, scenario, result, alternativeCount, {
        jobs,
        onStart: announce,
        profile: profile ? { profile: profile.profile, path: profile.file } : undefined,
      });
      if (opts.json) {
        // What the imports set and warned about, and the scenario's own warnings, for scripts (also on stderr).
        const extra = {
          ...(imports.length > 0 ? { imports: importsJson(imports, opts.set) } : {}),
          ...(scenario.warnings ? { warnings: scenario.warnings } : {}),
          ...(profile ? { profile: { file: profile.file, applied: profile.applied } } : {}),
        };
        io.out(
          JSON.stringify(
            {
              ...simulateJson(result),
              errorBand: bandJson(band.kind, band.band, result.stepTimeS),
              alternatives,
              ...extra,
            },
            null,
            2,
          ),
        );
      } else
        io.out(
          [
            formatStepSummary(
              result,
              {
                clusterName: scenario.cluster.name,
                modelName: scenario.model.name,
                gemmRate: gemmRateLine(scenario.cluster.node.gpu, precisionInfo(scenario.training.precision).gemmDtype),
              },
              band,
            ),
            formatAdvice(result, alternatives),
            ...describeImports(imports, opts.set),
          ].join('\n'),
        );
      await writeStepFiles(scenario, run, opts, view, io, alternatives);
    },
  );
}

/** The gradient buckets: with a pipeline, the count is over every stage, each GPU holding its stage's. */
function bucketsText(r: StepResult): string {
  const mean = `${formatBytes(r.buckets.meanBytes)} on average`;
  if (r.parallel.pp === 1) return `${r.buckets.count} gradient buckets of ${mean}`;
  return (
    `${r.buckets.count} gradient buckets over the ${r.parallel.pp} pipeline stages (about ` +
    `${Math.round(r.buckets.count / r.parallel.pp)} on each GPU), ${mean}`
  );
}

/** Parses a count option (0 or more). */
function parseCount(text: string, option: string): number {
  if (!/^\d+$/.test(text.trim())) throw new UsageError(`${option}: expected a whole number ≥ 0, got '${text}'`);
  return Number(text);
}
