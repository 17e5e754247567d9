import type { Command } from 'commander';
import { runPublishedCheck } from '../validation/publishedCheck.js';
import { parseValidateArgs } from '../validation/validateArgs.js';
import type { Output } from './output.js';
import { UsageError } from './usageError.js';

/**
 * `clustersim check-published` (what `npm run validate` runs): predicts published measured training runs and prints
 * the error. Its options are parsed and checked by validateArgs.ts, which also writes its --help.
 */
export function registerCheckPublished(program: Command, _io: Output): void {
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
      await runPublishedCheck(options);
    });
}
