import cliProgress from 'cli-progress';
import { plainProgressLines, type SweepProgress } from '../report/progressLines.js';
import { processOutput, type Output } from './output.js';

export type { SweepProgress };

/**
 * Progress of a sweep's points on stderr. On a terminal, a bar. Otherwise (a log, a batch job) plain lines: one when
 * the first point is done, which tells how long a point takes, then at most one every `PLAIN_PROGRESS_EVERY_MS`
 * (`progressLines.ts`), as calibrate's, and at the end one with the final count if the last line did not have it.
 * Nothing when the output is not the process's own (tests, library use).
 */
export function sweepProgress(io: Output, what: string, total: number, nowMs: () => number = Date.now): SweepProgress {
  if (io !== processOutput) return { tick: () => {}, stop: () => {} };
  if (process.stderr.isTTY) {
    const bar = new cliProgress.SingleBar(
      {
        stream: process.stderr,
        format: `${what} {bar} {value}/{total} runs | done: {label}`,
        hideCursor: true,
        clearOnComplete: true,
      },
      cliProgress.Presets.shades_classic,
    );
    bar.start(total, 0, { label: '' });
    return { tick: (label) => bar.increment(1, { label }), stop: () => bar.stop() };
  }
  return plainSweepProgress(io, what, total, nowMs);
}

/** The plain-line form of `sweepProgress`, for any output (exported for tests). */
export function plainSweepProgress(
  io: Output,
  what: string,
  total: number,
  nowMs: () => number = Date.now,
): SweepProgress {
  return plainProgressLines((line) => io.err(line), what, total, nowMs);
}
