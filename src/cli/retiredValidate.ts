import type { Command } from 'commander';
import { UsageError } from './usageError.js';

/**
 * `clustersim validate` named two unrelated checks (a profile's, and `npm run validate`'s published data); it is now
 * `check-profile` and `check-published`. The old name stays, hidden, to say which one to run instead.
 */
export function registerRetiredValidate(program: Command): void {
  program
    .command('validate', { hidden: true })
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .argument('[args...]')
    .action((args: string[]) => {
      const withProfile = args.some((a) => a === '--profile' || a.startsWith('--profile='));
      throw new UsageError(
        "'validate' is now two commands: 'clustersim check-profile --profile p.json' runs held-out workloads" +
          ` against a calibrated profile${withProfile ? ' (the one you asked for)' : ''},` +
          " and 'clustersim check-published' (npm run validate) predicts published measured runs",
      );
    });
}
