import { fileErrorReason } from '../fileErrors.js';
import type { Command } from 'commander';
import { MergeError, mergeParts, type PartText } from '../sweep/merge.js';
import { VERSION } from '../version.js';
import { writeScaleOutputs } from './scaleOutput.js';
import type { Output } from './output.js';
import { UsageError } from './usageError.js';
import { checkOutputFiles, writeReportFile } from './reportFiles.js';
import { isPlanPart, mergePlanParts, PlanPartError, readPlanPart } from '../plan/parts.js';
import { formatPlan, planCsv, planJson } from './planOutput.js';
import { readInputText } from '../inputFile.js';

interface MergeOptions {
  json?: boolean;
  csv?: string;
  svg?: string;
}

function readPart(file: string): PartText {
  try {
    return { file, text: readInputText(file) };
  } catch (err) {
    const why = fileErrorReason(err);
    throw new UsageError(`cannot read part '${file}': ${why}`);
  }
}

/** Joins the parts of a plan and prints (and writes) the answer as the unsharded plan would. */
function mergePlanOutput(texts: readonly PartText[], opts: MergeOptions, io: Output): void {
  let merged;
  try {
    merged = mergePlanParts(texts.map((t) => ({ file: t.file, part: readPlanPart(t.file, t.text) })));
  } catch (err) {
    if (err instanceof PlanPartError) throw new UsageError(err.message);
    throw err;
  }
  const { result, meta } = merged;
  const ctx = { name: meta.name, command: meta.command, gpus: result.gpus };
  io.out(opts.json ? JSON.stringify(planJson(result, ctx), null, 2) : formatPlan(result, ctx, meta.top));
  if (opts.csv) writeReportFile(opts.csv, planCsv([result]), io);
}

export function registerMerge(program: Command, io: Output): void {
  program
    .command('merge')
    .description(
      'join the parts of a sharded scale sweep (scale --shard i/N) or plan (plan --shard i/N) into one answer',
    )
    .argument('<parts...>', 'the files the parts wrote (part-*.jsonl of scale, part-*.json of plan), in any order')
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
  $ clustersim merge part-*.jsonl --csv scale.csv --svg scale.svg
  $ clustersim merge plan-part-*.json --json          # the parts of plan --shard i/N --out plan-part-i.json`,
    )
    .action(async (files: string[], opts: MergeOptions) => {
      checkOutputFiles(
        [
          [opts.csv, '--csv'],
          [opts.svg, '--svg'],
        ],
        files.map((f) => [f, 'a part']),
      );
      const texts = files.map(readPart);
      const plans = texts.filter((t) => isPlanPart(t.text));
      if (plans.length > 0) {
        if (plans.length < texts.length)
          throw new UsageError(
            `${texts.find((t) => !isPlanPart(t.text))!.file}: not a part of a plan, as ${plans[0].file} is; ` +
              'merge parts of one command',
          );
        if (opts.svg) throw new UsageError('--svg: a plan has no scaling chart; plan --report draws one unsharded');
        mergePlanOutput(plans, opts, io);
        return;
      }
      let merged;
      try {
        merged = mergeParts(texts);
      } catch (err) {
        if (err instanceof MergeError) throw new UsageError(err.message);
        throw err;
      }
      await writeScaleOutputs(merged.series, merged.mode, opts, io, `clustersim ${VERSION} merge`);
    });
}
