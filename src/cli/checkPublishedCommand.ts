import { Option, type Command } from 'commander';
import { plainProgressLines, type SweepProgress } from '../report/progressLines.js';
import { runPublishedCheck } from '../validation/publishedCheck.js';
import type { RowProgress } from '../validation/rowProgress.js';
import { validateOptions, type PublishedCheckArgs } from '../validation/validateArgs.js';
import { processOutput, type Output } from './output.js';
import { UsageError } from './usageError.js';

/** An option of check-published: its flags as commander takes them, its lines in --help, and its default. */
interface OptionDoc {
  flags: string;
  help: readonly string[];
  default?: string;
}

const OPTIONS: readonly OptionDoc[] = [
  {
    flags: '--all',
    help: [
      'every published set: the ones below, the runs of scenarios/checks/ (NeMo on H100,',
      "FSDP on A100), llm-foundry's FSDP benchmarks and DeepSpeed's ZeRO-3 runs of GPT-3 175B",
      "on 128-1,024 A100; each set's rows, MAPE, signed mean",
      'and worst row, how well the predictions rank the splits of one job, and the error',
      'bands simulate and scale show',
    ],
  },
  { flags: '--write-residuals', help: ['with --all: write those residuals to data/validation-residuals.json'] },
  {
    flags: '--fit',
    help: [
      "fit the project's few fitted constants (the sustained GEMM fraction per GPU",
      "generation) on their declared training subsets and print them beside the presets'",
    ],
  },
  {
    flags: '--set <name>',
    default: 'vtrain',
    help: [
      "vtrain (default: 1,549 Megatron-DeepSpeed steps on A100, vTrain MICRO'24)",
      '| megatron-sc21 (Table 1 of Narayanan et al. SC21, TFLOP/s per GPU)',
      '| megatron-sp22 (Table 5 of Korthikanti et al. 2022: iteration time, full',
      '  recompute vs sequence parallelism + selective recompute)',
      "| h200-kernels (the H200 preset's attention kernels, Llama layers eager and",
      "  compiled, and Megatron's softmax fallback against PyTorch on one H200,",
      '  reports/calibration/h200)',
    ],
  },
  { flags: '--only <group>', help: ['vtrain set only: single | multi'] },
  { flags: '--limit <n>', help: ['the first n rows of each set'] },
  {
    flags: '--host-op-us <us>',
    help: [
      'vtrain set: host cost of one framework call (training.hostOpUs) in place of the',
      'cited 16.1 µs, to see how much the result hangs on it (not a fitted value)',
    ],
  },
  {
    flags: '--host-collective-us <us>',
    help: [
      'vtrain set: host cost of one torch.distributed collective call',
      '(training.hostCollectiveUs) in place of the cited 89 µs, the same kind of run',
    ],
  },
  {
    flags: '--vocab <split>',
    default: 'peer',
    help: [
      "vtrain set: peer (default, a hypothesis: 50257 // tp rows per rank, as the peer's",
      'own profiling model splits it) | megatron-padded (a multiple of 128 × tp, what',
      'Megatron-DeepSpeed does)',
    ],
  },
  {
    flags: '--decompose',
    help: [
      'vtrain set: split measured and predicted times into per-layer, per-micro-batch',
      "and per-step parts (per family; with pipelines, the slowest stage's)",
    ],
  },
  { flags: '--json', help: ['one JSON object'] },
  // Declared as an option, not commander's help option: help is printed once the others are checked, as before.
  { flags: '-h, --help', help: ['this text'] },
];

const EXAMPLES = [
  'clustersim check-published --all',
  'npm run validate',
  'npm run validate -- --all',
  'npm run validate -- --all --write-residuals',
  'npm run validate -- --fit',
  'npm run validate -- --only single --decompose',
  'npm run validate -- --host-op-us 18',
  'npm run validate -- --only single --host-collective-us 13.4',
  'npm run validate -- --only single --vocab megatron-padded --decompose',
  'npm run validate -- --set megatron-sc21 --json',
  'npm run validate -- --set megatron-sp22',
  'npm run validate -- --set h200-kernels',
];

/** Where an option's help starts; flags as long or longer have it on the next line. */
const HELP_COLUMN = 20;

/** An option's lines in --help: the flags, and beside or under them its help. */
function optionHelpLines(o: OptionDoc): string[] {
  const flags = `  ${o.flags}`;
  const indent = ' '.repeat(HELP_COLUMN);
  const [first, ...rest] = o.help;
  const head = flags.length < HELP_COLUMN ? [flags.padEnd(HELP_COLUMN) + first] : [flags, indent + first];
  return [...head, ...rest.map((l) => indent + l)];
}

/** check-published's --help (also `clustersim help check-published`). */
function helpText(): string {
  return [
    'Usage: clustersim check-published [options]',
    '       npm run validate -- [options]',
    '',
    'Predicts every row of a published measurement set and prints the error of the predictions.',
    '',
    'Options:',
    ...OPTIONS.flatMap(optionHelpLines),
    '',
    'Examples:',
    ...EXAMPLES.map((e) => `  ${e}`),
  ].join('\n');
}

/**
 * A value that looks like an option (`--set --json`: the value forgotten) is refused, as node's parser did before
 * commander parsed these options; a negative number is a value, which the option's own check refuses. Commander does
 * not tell `--set=-x` from `--set -x`, so the first is refused the same way.
 */
function notAnOption(long: string): (value: string) => string {
  return (value) => {
    if (value.length > 1 && value.startsWith('-') && !/^-\d/.test(value))
      throw new UsageError(
        `check-published: Option '${long}' argument is ambiguous.\n` +
          `Did you forget to specify the option argument for '${long}'?\n` +
          `To specify an option argument starting with a dash use '${long}=-XYZ'.`,
      );
    return value;
  };
}

/** The commander option of an entry of OPTIONS. */
function commanderOption(o: OptionDoc): Option {
  const option = new Option(o.flags, o.help.map((l) => l.trim()).join(' '));
  if (o.default !== undefined) option.default(o.default);
  if (option.required) option.argParser(notAnOption(option.long!));
  return option;
}

/** Commander's unknown-option message, as node's parser put it: a switch given a value says so. */
function unknownOptionMessage(cmd: Command, message: string): string {
  const flag = /^error: unknown option '(.*)'$/.exec(message)?.[1] ?? '';
  const withValue = /^(--[^=]+)=/.exec(flag);
  const option = withValue && cmd.options.find((o) => o.long === withValue[1]);
  return option ? `Option '${option.flags}' does not take an argument` : `Unknown option '${flag}'`;
}

/** Commander's missing-value message, as node's parser put it. */
function missingValueMessage(cmd: Command, message: string): string {
  const option = cmd.options.find((o) => message.includes(`'${o.flags}'`));
  return `Option '${option?.long} <value>' argument missing`;
}

/** Commander's message for a command line it cannot parse, in the words check-published has always used. */
function parseErrorMessage(cmd: Command, message: string, code: string | undefined): string {
  if (code === 'commander.unknownOption') return unknownOptionMessage(cmd, message);
  if (code === 'commander.optionMissingArgument') return missingValueMessage(cmd, message);
  // The arguments it did not take are cmd.args; the command takes none.
  if (code === 'commander.excessArguments')
    return `Unexpected argument '${cmd.args[0]}'. This command does not take positional arguments`;
  return message.replace(/^error: /, '');
}

/** Commander's parse errors as usage errors: one line with what is wrong, exit code 2, no "run with --help". */
function parseErrorsAsUsage(cmd: Command): void {
  cmd.error = (message, errorOptions) => {
    throw new UsageError(`check-published: ${parseErrorMessage(cmd, message, errorOptions?.code)}`);
  };
}

/** The long flags given on the command line (an option at its default is not given). */
function givenFlags(cmd: Command): Set<string> {
  const given = cmd.options.filter((o) => cmd.getOptionValueSource(o.attributeName()) === 'cli');
  return new Set(given.map((o) => o.long!));
}

/** On a terminal, the count of rows done, redrawn in place on stderr and cleared at the end. */
function terminalCounter(total: number): SweepProgress {
  let done = 0;
  return {
    tick: () => void process.stderr.write(`\rrow ${++done}/${total}`),
    stop: () => void process.stderr.write('\r\x1b[K'),
  };
}

/**
 * Progress of a run's rows on stderr: on a terminal a counter redrawn in place; in a log or CI, where a run of several
 * minutes printed nothing, plain lines (the first row done, then at most one every 30 s, and the last).
 */
function rowProgress(io: Output): RowProgress {
  return (total) =>
    io === processOutput && process.stderr.isTTY
      ? terminalCounter(total)
      : plainProgressLines((line) => io.err(line), 'check-published', total);
}

/** Checks the options, then prints the help or runs the check and prints its text. */
async function runCheck(io: Output, args: PublishedCheckArgs & { help?: boolean }, cmd: Command): Promise<void> {
  let options;
  try {
    options = validateOptions(args, givenFlags(cmd));
  } catch (err) {
    throw new UsageError(`check-published: ${(err as Error).message}`);
  }
  io.out(args.help ? helpText() : await runPublishedCheck(options, rowProgress(io)));
}

/**
 * `clustersim check-published` (what `npm run validate` runs): predicts published measured training runs and prints
 * the error. Commander parses the options; validateArgs.ts checks their values and what goes together.
 */
export function registerCheckPublished(program: Command, io: Output): void {
  const cmd = program
    .command('check-published')
    .description(
      'predict published measured training runs (vTrain, Megatron, NeMo, FSDP, DeepSpeed) and print the error',
    )
    .helpOption(false)
    .showSuggestionAfterError(false)
    .configureHelp({ formatHelp: () => helpText() });
  for (const o of OPTIONS) cmd.addOption(commanderOption(o));
  parseErrorsAsUsage(cmd);
  cmd.action((args: PublishedCheckArgs & { help?: boolean }, command: Command) => runCheck(io, args, command));
}
