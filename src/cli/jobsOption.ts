import { defaultJobs } from '../threads/taskPool.js';
import { UsageError } from './usageError.js';

/** `--jobs` help: threads to simulate `what` on. */
export function jobsHelp(what: string): string {
  return (
    `threads to simulate ${what} on (default: one per core, ${defaultJobs()} here; ` +
    '1: one after another in the main thread)'
  );
}

/** Reads `--jobs`: a whole number of threads ≥ 1 (`what`: what one thread then runs, for the message). */
export function parseJobs(text: string | undefined, what: string): number {
  if (text === undefined) return defaultJobs();
  if (!/^\s*\d+\s*$/.test(text) || Number(text) < 1)
    throw new UsageError(
      `--jobs: '${text}' is not a number of threads; give a whole number ≥ 1 (1 runs ${what} in one thread; ` +
        `default: one per core, ${defaultJobs()} here)`,
    );
  return Number(text);
}
