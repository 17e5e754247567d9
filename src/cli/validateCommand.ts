import type { Command } from 'commander';
import { writeReportFile } from './reportFiles.js';
import { hostname } from 'node:os';
import { openCpuBackend, openCudaBackend } from '../calibrate/backends.js';
import { loadAddon } from '../calibrate/native.js';
import { readProfile } from '../calibrate/profile.js';
import { runValidation, type CaseResult, type ValidationSummary } from '../calibrate/validateRun.js';
import { asUsageError, onInterrupt, progressReporter } from './calibrateCommand.js';
import type { Output } from './output.js';
import { table } from '../report/textTable.js';
import { formatSeconds } from './units.js';
import { CheckFailedError, InterruptedError, UsageError } from './usageError.js';
import { checkDistinctFiles, prepareOutputFile } from './outputFile.js';

interface ValidateOptions {
  profile: string;
  json?: boolean;
  maxError?: string;
  quick?: boolean;
  out?: string;
}

/** `--max-error`: a percentage > 0 ("15" or "15%"). */
export function parsePercent(text: string, option: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*%?\s*$/.exec(text);
  const v = m ? Number(m[1]) : NaN;
  if (!(v > 0)) throw new UsageError(`${option}: expected a percentage greater than 0 (e.g. 15 or 15%), got '${text}'`);
  return v;
}

/** The table `check-profile` prints, with the summary lines under it. */
export function formatValidation(cases: readonly CaseResult[], s: ValidationSummary): string {
  const sign = (e: number) => `${e >= 0 ? '+' : ''}${e.toFixed(1)}%`;
  const lines = [
    `held-out workloads on ${s.device} (${s.backend} backend): predicted by the simulator with the profile vs ` +
      `measured (${s.statistic === 'min' ? 'fastest' : 'median'} of the repeats)`,
    '',
    table(
      ['case', 'predicted', 'measured', 'error', 'spread'],
      cases.map((c) => [
        c.name,
        formatSeconds(c.predictedS),
        formatSeconds(c.measuredS),
        sign(c.errorPct),
        `${c.spreadPct.toFixed(1)}%`,
      ]),
    ),
    '',
    `  ${s.cases} cases: median |error| ${s.medianErrorPct.toFixed(1)}%, ` +
      `worst ${s.worstErrorPct.toFixed(1)}% (${s.worstCase})`,
    "  noise: spread (max − min)/median of each case's repeats: " +
      `median ${s.medianSpreadPct.toFixed(1)}%, worst ${s.worstSpreadPct.toFixed(1)}%`,
  ];
  if (s.drift) {
    const f = (v: number) => (Number.isFinite(v) ? `${v >= 0 ? '+' : ''}${v.toFixed(1)}%` : 'n/a');
    lines.push(
      `  drift: calibration measurements retaken now run ${f(s.drift.beforePct)} before and ${f(s.drift.afterPct)} ` +
        `after the cases (${s.drift.anchors.join(', ')})`,
    );
    if (s.driftAdjustedMedianErrorPct !== undefined)
      lines.push(
        `  with that drift taken out of the predictions: median |error| ${s.driftAdjustedMedianErrorPct.toFixed(1)}%`,
      );
  }
  for (const k of s.skipped) lines.push(`  skipped ${k.name}: ${k.reason}`);
  return lines.join('\n');
}

export function registerValidate(program: Command, io: Output): void {
  program
    .command('check-profile')
    .description('run held-out workloads for real, simulate them with a profile, and compare')
    .requiredOption('--profile <profile.json>', 'a profile written by `clustersim calibrate`')
    .option('--json', 'print { cases: [{ name, predictedS, measuredS, errorPct, … }], summary }')
    .option('--max-error <P>', 'exit non-zero when the median |error| is above P percent')
    .option('--quick', 'fewer cases (about half a minute on a CPU)')
    .option('--out <results.json>', 'also write the cases and the summary as JSON to this file')
    .addHelpText(
      'after',
      `
The cases use sizes and shapes the calibration did not measure: off-grid GEMMs, forward + backward
GEMM chains of real transformer layers, a backward pass whose gradient copies overlap compute, and
copy and collective sizes between the fitted ones. It runs on the profile's backend (cuda or cpu).
error = (predicted − measured) / measured; spread = (max − min) / median of the repeats.
With --max-error the exit status is 3 when the median |error| is above the limit (2 is bad input).

Examples:
  $ clustersim check-profile --profile cpu-profile.json --quick
  $ clustersim check-profile --profile h200.json --json --max-error 5`,
    )
    .action(async (opts: ValidateOptions) => {
      const maxError = opts.maxError === undefined ? undefined : parsePercent(opts.maxError, '--max-error');
      checkDistinctFiles([[opts.out, '--out']], [[opts.profile, 'the --profile file']]);
      if (opts.out) prepareOutputFile(opts.out, '--out');
      const controller = new AbortController();
      const progress = progressReporter(io, 'check-profile');
      const removeHandler = onInterrupt(io, controller, 'check-profile');
      let result: Awaited<ReturnType<typeof runValidation>>;
      try {
        const profile = readProfile(opts.profile);
        if (profile.machine.hostname !== hostname())
          io.err(
            `clustersim: note: ${opts.profile} was calibrated on ${profile.machine.hostname}, this is ${hostname()}`,
          );
        const addon = loadAddon();
        const tooMany = (threads: number, cores: number) =>
          `${opts.profile} was measured with ${threads} GEMM threads and this machine has ${cores} logical cores: ` +
          `validate it on a machine with at least ${threads} (or calibrate this one)`;
        const backend =
          profile.backend === 'cpu'
            ? openCpuBackend(addon, profile.machine.computeThreads, profile.machine.cpuClock, tooMany)
            : openCudaBackend(
                addon,
                undefined,
                (s) => io.err(`clustersim: ${s}`),
                `${opts.profile} is a CUDA profile: validate it on a machine with the GPUs it was measured on`,
              );
        result = await runValidation({
          backend,
          profile,
          quick: !!opts.quick,
          signal: controller.signal,
          onProgress: (d, t, c) => progress.update(d, t, c?.name, c?.kind),
        });
        progress.stop();
      } catch (err) {
        progress.stop();
        throw asUsageError(err);
      } finally {
        removeHandler();
      }
      const { cases, summary, interrupted } = result;
      // A run cut short says so in the file too: its summary covers only the cases that ran.
      const json = JSON.stringify({ cases, summary, ...(interrupted ? { interrupted: true } : {}) }, null, 2);
      if (opts.out) writeReportFile(opts.out, `${json}\n`, io);
      if (opts.json) io.out(json);
      else io.out(formatValidation(cases, summary));
      if (interrupted) throw new InterruptedError('validation interrupted; the cases above ran');
      if (cases.length === 0) throw new UsageError('no validation case could run');
      if (maxError !== undefined && !(summary.medianErrorPct <= maxError)) {
        throw new CheckFailedError(
          `median |error| ${summary.medianErrorPct.toFixed(1)}% is above --max-error ${maxError}%`,
        );
      }
    });
}
