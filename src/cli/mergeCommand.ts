import { readFileSync } from 'node:fs';
import { fileErrorReason } from '../fileErrors.js';
import type { Command } from 'commander';
import { MergeError, mergeParts, type PartText } from '../sweep/merge.js';
import { VERSION } from '../version.js';
import { writeScaleOutputs } from './scaleCommand.js';
import type { Output } from './output.js';
import { UsageError } from './usageError.js';
import { checkOutputFiles } from './reportFiles.js';

interface MergeOptions {
  json?: boolean;
  csv?: string;
  svg?: string;
}

function readPart(file: string): PartText {
  try {
    return { file, text: readFileSync(file, 'utf8') };
  } catch (err) {
    const why = fileErrorReason(err);
    throw new UsageError(`cannot read part '${file}': ${why}`);
  }
}

export function registerMerge(program: Command, io: Output): void {
  program
    .command('merge')
    .description('join the parts of a sharded scale sweep (scale --shard i/N) into one table, JSON, CSV or chart')
    .argument('<parts...>', 'the JSON-lines files the parts wrote (part-*.jsonl), in any order')
    .option('--json', 'print { version, mode, series: [{ name, rows }] } instead of tables, as scale --json does')
    .option('--csv <file.csv>', 'write the rows of every scenario as CSV')
    .option('--svg <file.svg>', 'write the scaling chart (throughput and efficiency against GPUs)')
    .addHelpText(
      'after',
      `
The output is the same as the sweep run in one go. The parts must all come from the same sweep (same
scenarios, --set overrides, GPU counts, mode and clustersim version), and together hold every point
exactly once; otherwise merge names the file and line at fault and exits with code 2. (An HTML report
needs the timeline of a run, which parts do not keep: run scale --report on the size you want to see.)

Examples:
  $ clustersim scale a.yaml --gpus 8..8192 --shard 1/2 --out part-1.jsonl   # on one machine
  $ clustersim scale a.yaml --gpus 8..8192 --shard 2/2 --out part-2.jsonl   # on another
  $ clustersim merge part-*.jsonl --csv scale.csv --svg scale.svg`,
    )
    .action(async (files: string[], opts: MergeOptions) => {
      checkOutputFiles([[opts.csv, '--csv'], [opts.svg, '--svg']], files.map((f) => [f, 'a part']));
      let merged;
      try {
        merged = mergeParts(files.map(readPart));
      } catch (err) {
        if (err instanceof MergeError) throw new UsageError(err.message);
        throw err;
      }
      await writeScaleOutputs(merged.series, merged.mode, opts, io, `clustersim ${VERSION} merge`);
    });
}
