import type { Command } from 'commander';
import { plainProgressLines, type SweepProgress } from '../report/progressLines.js';
import { runPublishedCheck } from '../validation/publishedCheck.js';
import type { RowProgress } from '../validation/rowProgress.js';
import { parseValidateArgs, VALIDATE_USAGE } from '../validation/validateArgs.js';
import { processOutput, type Output } from './output.js';
import { UsageError } from './usageError.js';

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

/**
 * `clustersim check-published` (what `npm run validate` runs): predicts published measured training runs and prints
 * the error. Its options are parsed and checked by validateArgs.ts, which also writes its --help.
 */
export function registerCheckPublished(program: Command, io: Output): void {
  program
    .command('check-published')
    .description(
      'predict published measured training runs (vTrain, Megatron, NeMo, FSDP, DeepSpeed) and print the error',
    )
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .argument('[options...]', 'see clustersim check-published --help')
    .action(async (args: string[]) => {
      let options;
      try {
        options = parseValidateArgs(args);
      } catch (err) {
        throw new UsageError(`check-published: ${(err as Error).message}`);
      }
      io.out(options.help ? VALIDATE_USAGE + '\n' : await runPublishedCheck(options, rowProgress(io)));
    });
}
