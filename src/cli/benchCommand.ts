import type { Command } from 'commander';
import { BENCH_CASE_NAMES, GROWTH_CASE_NAMES, runBench, unknownBenchCases } from '../bench/benchRun.js';
import type { Output } from './output.js';
import { UsageError } from './usageError.js';

/** `clustersim bench` (what `npm run bench` runs): times the fixed cases of src/bench/cases.ts. */
export function registerBench(program: Command, io: Output): void {
  program
    .command('bench')
    .description("time the simulator's fixed cases, each in a fresh process, and print median, min, max and peak RSS")
    .option('--repeat <n>', 'runs per case', '5')
    .option('--only <cases>', `run these cases, comma-separated: ${BENCH_CASE_NAMES.join(', ')}`)
    .option(
      '--growth',
      `run the growth cases (${GROWTH_CASE_NAMES.join(', ')}) ` +
        'and print how wall time and peak memory grow with GPUs and micro-batches (exponent b of x^b)',
    )
    .option('--json', 'print the rows as JSON')
    .addHelpText(
      'after',
      `
Figures are written down in reports/bench/README.md; quote medians and ratios, never a single run.

Examples:
  $ clustersim bench --repeat 5 --only hold-1e3,ring-step-256
  $ clustersim bench --repeat 1 --growth
  $ npm run bench -- --json`,
    )
    .action((opts: { repeat: string; only?: string; growth?: boolean; json?: boolean }) => {
      const repeat = Number(opts.repeat);
      if (!Number.isInteger(repeat) || repeat < 1)
        throw new UsageError(`--repeat: expected a whole number ≥ 1, got '${opts.repeat}'`);
      if (opts.growth && opts.only !== undefined)
        throw new UsageError('--only: not with --growth, which runs the growth cases');
      const only = opts.only?.split(',').map((s) => s.trim());
      const problem = only ? unknownBenchCases(only) : undefined;
      if (problem) throw new UsageError(`--only: ${problem}`);
      // On a terminal, one line of progress rewritten in place (Output's lines would scroll).
      const progress = process.stderr.isTTY ? (text: string) => process.stderr.write(`\r${text}   `) : undefined;
      runBench(
        { repeat, only, growth: opts.growth === true, json: opts.json === true },
        (text) => io.out(text),
        progress,
      );
      if (progress) process.stderr.write('\r\x1b[K');
    });
}
