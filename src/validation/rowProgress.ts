import { plainProgressLines, type SweepProgress } from '../report/progressLines.js';

/**
 * Progress of a validation run's rows on stderr: on a terminal a counter redrawn in place; in a log or CI, where a run
 * of several minutes printed nothing, plain lines (the first row done, then at most one every 30 s, and the last).
 */
export function rowProgress(total: number): SweepProgress {
  if (process.stderr.isTTY) {
    let done = 0;
    return {
      tick: () => void process.stderr.write(`\rrow ${++done}/${total}`),
      stop: () => void process.stderr.write('\r\x1b[K'),
    };
  }
  return plainProgressLines((line) => void process.stderr.write(`${line}\n`), 'check-published', total);
}
