import { parseArgs } from 'node:util';
import { VTRAIN_VOCABS, type VtrainVocab } from './vtrain.js';

/** Options of `clustersim check-published` (`npm run validate`). */
export interface ValidateOptions {
  set: 'vtrain' | 'megatron-sc21' | 'megatron-sp22' | 'h200-kernels';
  only?: 'single' | 'multi';
  /** First N rows of each set (Infinity: all). */
  limit: number;
  json: boolean;
  decompose: boolean;
  /** Every set at once: each set's error, the ranking quality, the error bands (runAll.ts). */
  all: boolean;
  /** With --all: write the residuals the error bands rest on (data/validation-residuals.json). */
  writeResiduals: boolean;
  /** Fit the project's fitted constants on their training subsets (runFit.ts). */
  fit: boolean;
  /** vtrain set: host cost per framework call, µs, in place of the cited one (a sensitivity run). */
  hostOpUs?: number;
  /** vtrain set: host cost per torch.distributed collective call, µs, in place of the cited one (a sensitivity run). */
  hostCollectiveUs?: number;
  /** vtrain set: how the vocabulary is split over tensor-parallel ranks. */
  vocab: VtrainVocab;
  help: boolean;
}

export const VALIDATE_USAGE = `Usage: clustersim check-published [options]
       npm run validate -- [options]

Predicts every row of a published measurement set and prints the error of the predictions.

Options:
  --all             every published set: the ones below, the runs of scenarios/checks/ (NeMo on H100,
                    FSDP on A100), llm-foundry's FSDP benchmarks and DeepSpeed's ZeRO-3 runs of GPT-3 175B
                    on 128-1,024 A100; each set's rows, MAPE, signed mean
                    and worst row, how well the predictions rank the splits of one job, and the error
                    bands simulate and scale show
  --write-residuals with --all: write those residuals to data/validation-residuals.json
  --fit             fit the project's few fitted constants (the sustained GEMM fraction per GPU
                    generation) on their declared training subsets and print them beside the presets'
  --set <name>      vtrain (default: 1,549 Megatron-DeepSpeed steps on A100, vTrain MICRO'24)
                    | megatron-sc21 (Table 1 of Narayanan et al. SC21, TFLOP/s per GPU)
                    | megatron-sp22 (Table 5 of Korthikanti et al. 2022: iteration time, full
                      recompute vs sequence parallelism + selective recompute)
                    | h200-kernels (the H200 preset's attention kernels, Llama layers eager and
                      compiled, and Megatron's softmax fallback against PyTorch on one H200,
                      reports/calibration/h200)
  --only <group>    vtrain set only: single | multi
  --limit <n>       the first n rows of each set
  --host-op-us <us> vtrain set: host cost of one framework call (training.hostOpUs) in place of the
                    cited 16.1 µs, to see how much the result hangs on it (not a fitted value)
  --host-collective-us <us>
                    vtrain set: host cost of one torch.distributed collective call
                    (training.hostCollectiveUs) in place of the cited 89 µs, the same kind of run
  --vocab <split>   vtrain set: peer (default, a hypothesis: 50257 // tp rows per rank, as the peer's
                    own profiling model splits it) | megatron-padded (a multiple of 128 × tp, what
                    Megatron-DeepSpeed does)
  --decompose       vtrain set: split measured and predicted times into per-layer, per-micro-batch
                    and per-step parts (per family; with pipelines, the slowest stage's)
  --json            one JSON object
  -h, --help        this text

Examples:
  clustersim check-published --all
  npm run validate
  npm run validate -- --all
  npm run validate -- --all --write-residuals
  npm run validate -- --fit
  npm run validate -- --only single --decompose
  npm run validate -- --host-op-us 18
  npm run validate -- --only single --host-collective-us 13.4
  npm run validate -- --only single --vocab megatron-padded --decompose
  npm run validate -- --set megatron-sc21 --json
  npm run validate -- --set megatron-sp22
  npm run validate -- --set h200-kernels`;

/** A host cost option's value in µs, or undefined when it is not given. */
function hostMicroseconds(value: string | undefined, option: string, maxUs: number): number | undefined {
  if (value === undefined) return undefined;
  const us = Number(value);
  if (!(us > 0 && us <= maxUs)) throw new Error(`${option}: expected µs > 0 (at most ${maxUs}), got '${value}'`);
  return us;
}

/** The options that take a value. */
const VALUE_OPTIONS = new Set(['--set', '--only', '--limit', '--host-op-us', '--host-collective-us', '--vocab']);

/**
 * A negative number after an option that takes a value is that value (`--limit -3` becomes `--limit=-3`), so that the
 * option's own check refuses it: node's parser takes it for an option and says only that the argument is ambiguous.
 */
function joinNegativeValues(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const next = argv[i + 1];
    if (VALUE_OPTIONS.has(argv[i]) && next !== undefined && /^-\d/.test(next)) {
      out.push(`${argv[i]}=${next}`);
      i++;
    } else out.push(argv[i]);
  }
  return out;
}

/** Parses and checks the options; throws an Error whose message says what is wrong and what is allowed. */
export function parseValidateArgs(argv: readonly string[]): ValidateOptions {
  const { values } = parseArgs({
    args: joinNegativeValues(argv),
    strict: true,
    options: {
      set: { type: 'string', default: 'vtrain' },
      only: { type: 'string' },
      limit: { type: 'string' },
      'host-op-us': { type: 'string' },
      'host-collective-us': { type: 'string' },
      vocab: { type: 'string' },
      json: { type: 'boolean', default: false },
      decompose: { type: 'boolean', default: false },
      all: { type: 'boolean', default: false },
      'write-residuals': { type: 'boolean', default: false },
      fit: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const sets = ['vtrain', 'megatron-sc21', 'megatron-sp22', 'h200-kernels'];
  if (!sets.includes(values.set)) throw new Error(`--set: unknown set '${values.set}' (${sets.join(' | ')})`);
  if (values.only !== undefined && values.only !== 'single' && values.only !== 'multi')
    throw new Error(`--only: '${values.only}' is not a group (single | multi)`);
  let limit = Infinity;
  if (values.limit !== undefined) {
    limit = Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1)
      throw new Error(`--limit: expected a whole number ≥ 1, got '${values.limit}'`);
  }
  // The scenario fields' own limits (schema.ts: training.hostOpUs, training.hostCollectiveUs).
  const hostOpUs = hostMicroseconds(values['host-op-us'], '--host-op-us', 10_000);
  const hostCollectiveUs = hostMicroseconds(values['host-collective-us'], '--host-collective-us', 100_000);
  const vocab = values.vocab ?? 'peer';
  if (!VTRAIN_VOCABS.includes(vocab as VtrainVocab))
    throw new Error(`--vocab: unknown split '${vocab}' (${VTRAIN_VOCABS.join(' | ')})`);
  if (values.fit) {
    const others = [
      'all',
      'set',
      'only',
      'limit',
      'host-op-us',
      'host-collective-us',
      'vocab',
      'decompose',
      'write-residuals',
    ].filter((o) => argv.some((a) => a === `--${o}` || a.startsWith(`--${o}=`)));
    if (others.length > 0)
      throw new Error(
        `--fit: not with ${others.map((o) => `--${o}`).join(', ')} (it fits on the training subsets, not on a set); it takes --json`,
      );
  }
  if (values['write-residuals'] && !values.all)
    throw new Error('--write-residuals: only with --all (the residuals are those of every set)');
  if (values['write-residuals'] && values.limit !== undefined)
    throw new Error('--write-residuals: not with --limit (the error bands rest on every row)');
  if (values.all) {
    const given = (['set', 'only', 'host-op-us', 'host-collective-us', 'vocab'] as const)
      .filter((o) => argv.some((a) => a === `--${o}` || a.startsWith(`--${o}=`)))
      .map((o) => `--${o}`);
    if (values.decompose) given.push('--decompose');
    if (given.length > 0)
      throw new Error(
        `${given.join(', ')}: not with --all, which runs every set as it stands (it takes --limit, --json and --write-residuals)`,
      );
  }
  // The other sets take --limit and --json only: an option of the vtrain set would be ignored without a word.
  else if (values.set !== 'vtrain') {
    const given = (['only', 'host-op-us', 'host-collective-us', 'vocab'] as const)
      .filter((o) => values[o] !== undefined)
      .map((o) => `--${o}`);
    if (values.decompose) given.push('--decompose');
    if (given.length > 0)
      throw new Error(`${given.join(', ')}: for the vtrain set only; --set ${values.set} takes --limit and --json`);
  }
  return {
    hostOpUs,
    hostCollectiveUs,
    vocab: vocab as VtrainVocab,
    set: values.set as ValidateOptions['set'],
    only: values.only as ValidateOptions['only'],
    limit,
    json: values.json,
    decompose: values.decompose,
    all: values.all,
    writeResiduals: values['write-residuals'],
    fit: values.fit,
    help: values.help,
  };
}
