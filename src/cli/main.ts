import { boundedMessage } from './messageBounds.js';
import { writeSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { fileWriteErrorReason } from '../fileErrors.js';
import { Command, CommanderError } from 'commander';
import { ScenarioError } from '../sim/errors.js';
import { VERSION } from '../version.js';
import { processOutput, type Output } from './output.js';
import { CheckFailedError, InterruptedError, UsageError } from './usageError.js';
import { registerSimulate } from './simulateCommand.js';
import { registerCollective } from './collectiveCommand.js';
import { registerPresets } from './presetsCommand.js';
import { registerCalibrate } from './calibrateCommand.js';
import { registerValidate } from './validateCommand.js';
import { registerMemory } from './memoryCommand.js';
import { registerScale } from './scaleCommand.js';
import { registerMerge } from './mergeCommand.js';
import { registerPlan } from './planCommand.js';
import { registerCheckPublished } from './checkPublishedCommand.js';
import { registerBench } from './benchCommand.js';
import { registerRetiredValidate } from './retiredValidate.js';

/** Exit codes: 0 ok, 1 internal error, 2 bad input (scenario or usage), 3 a requested check failed. */
export const EXIT_BAD_INPUT = 2;
export const EXIT_CHECK_FAILED = 3;
/** Stopped by Ctrl-C after keeping its work (128 + SIGINT, what a shell reports). */
export const EXIT_INTERRUPTED = 130;

/** Where commander writes: help to stdout, errors to stderr with the tool's name in front, as every other error. */
function outputOf(io: Output) {
  return {
    writeOut: (s: string) => io.out(s),
    writeErr: (s: string) => io.err(s),
    outputError: (s: string, write: (s: string) => void) => write(`clustersim: ${s}`),
  };
}

export function buildProgram(io: Output): Command {
  const program = new Command();
  program
    .name('clustersim')
    .description('Predict how distributed deep-learning training behaves on a GPU cluster, before renting it.')
    .version(VERSION)
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput(outputOf(io))
    .exitOverride();
  // A second scenario file or a stray word is a mistake, not something to ignore.
  program.allowExcessArguments(false);
  registerSimulate(program, io);
  registerCollective(program, io);
  registerPresets(program, io);
  registerCalibrate(program, io);
  registerValidate(program, io);
  registerMemory(program, io);
  registerScale(program, io);
  registerMerge(program, io);
  registerPlan(program, io);
  registerCheckPublished(program, io);
  registerBench(program, io);
  registerRetiredValidate(program);
  for (const c of program.commands) c.exitOverride().allowExcessArguments(false).configureOutput(outputOf(io));
  program.addHelpText(
    'after',
    `
Examples:
  $ clustersim simulate scenarios/bert-large-ddp-2node.yaml
  $ clustersim simulate scenarios/llama2-7b-ddp-16node.yaml --json
  $ clustersim simulate scenarios/gpt3-175b-1024xa100.yaml --set parallel.pp=16 --set parallel.virtualStages=2
  $ clustersim simulate scenarios/llama2-70b-zero2-8xa100.yaml --deepspeed-config scenarios/imports/ds_config.json
  $ clustersim simulate scenarios/imports/gpt3-175b-a100.yaml --megatron-args @scenarios/imports/megatron-args.txt
  $ clustersim memory scenarios/llama2-70b-zero2-8xa100.yaml
  $ clustersim scale scenarios/llama2-7b-ddp-16node.yaml --gpus 8,16,32,64,128
  $ clustersim plan scenarios/llama2-13b-tp8-nvswitch.yaml --fix tp=8 --space microBatch=1,2
  $ clustersim collective --cluster dgx-a100-80gb --nodes 1 --op all_reduce --min-bytes 8 --max-bytes 8GiB
  $ clustersim presets`,
  );
  return program;
}

/** Runs the CLI; returns the exit code instead of exiting, so tests can call it. */
export async function runCli(argv: string[], io: Output = processOutput): Promise<number> {
  const program = buildProgram(io);
  try {
    await program.parseAsync(argv);
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help asked for (--help, `help`) is a success; help shown because no command was given is not.
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help')
        return err.exitCode === 0 ? 0 : EXIT_BAD_INPUT;
      return EXIT_BAD_INPUT;
    }
    if (err instanceof InterruptedError) {
      io.err(`clustersim: ${boundedMessage(err.message)}`);
      return EXIT_INTERRUPTED;
    }
    if (err instanceof CheckFailedError) {
      io.err(`clustersim: ${boundedMessage(err.message)}`);
      return EXIT_CHECK_FAILED;
    }
    if (err instanceof ScenarioError || err instanceof UsageError) {
      io.err(`clustersim: ${boundedMessage(err.message)}`);
      return EXIT_BAD_INPUT;
    }
    const e = err as Error;
    io.err(`clustersim: internal error: ${boundedMessage(e?.message ?? String(err))}`);
    if (process.env.CLUSTERSIM_DEBUG) io.err(e?.stack ?? '');
    else io.err('(set CLUSTERSIM_DEBUG=1 to see where; please report it)');
    return 1;
  }
}

/** Entry point used by bin/clustersim.js. */
export async function main(argv: string[]): Promise<void> {
  // A reader that stops early (`clustersim simulate --help | head`) is not an error of ours: stop quietly. Output that
  // cannot be written (stdout to a full disk) stops the run with the reason, as an output file does.
  for (const [stream, name] of [
    [process.stdout, 'standard output'],
    [process.stderr, 'standard error'],
  ] as const) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
      try {
        writeSync(2, `clustersim: cannot write to ${name}: ${fileWriteErrorReason(err, name)}\n`);
      } catch {
        // stderr itself is what failed: the exit code says it.
      }
      process.exit(EXIT_BAD_INPUT);
    });
  }
  process.exitCode = await runCli(argv);
}

// Run as a script (`node dist/cli/main.js …`) it works as bin/clustersim.js does, without the larger heap.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) void main(process.argv);
