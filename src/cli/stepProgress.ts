import cliProgress from 'cli-progress';
import type { StepProgress } from '../sim/simulateStep.js';
import { processOutput, type Output } from './output.js';
import { formatSeconds } from './units.js';

/** Wall time a step's simulation runs before its progress is shown (short runs stay quiet). */
export const STEP_PROGRESS_AFTER_MS = 1000;

/**
 * Progress of one step's simulation on stderr, shown only on a terminal (piped and `--json` output stay clean) and
 * only once the run has taken `STEP_PROGRESS_AFTER_MS`: the share of the program's tasks done and the simulated time.
 * The cursor stays visible: the simulation runs without a break for a Ctrl-C handler, so nothing would show it again.
 */
export function stepProgress(io: Output, what: string): { update: (p: StepProgress) => void; stop: () => void } {
  if (io !== processOutput || !process.stderr.isTTY) return { update: () => {}, stop: () => {} };
  const startedMs = Date.now();
  let bar: cliProgress.SingleBar | undefined;
  return {
    update: (p) => {
      if (!bar) {
        if (Date.now() - startedMs < STEP_PROGRESS_AFTER_MS) return;
        bar = new cliProgress.SingleBar(
          {
            stream: process.stderr,
            format: `${what} {bar} {percentage}% of {tasks} tasks | {simulated} of the step simulated`,
            hideCursor: false,
            clearOnComplete: true,
          },
          cliProgress.Presets.shades_classic,
        );
        bar.start(p.tasks, 0, { simulated: '', tasks: p.tasks.toLocaleString('en-US') });
      }
      // A run that starts over (without idle-time collectives) counts its tasks again.
      bar.setTotal(p.tasks);
      bar.update(p.tasksDone, {
        simulated: formatSeconds(p.simulatedNs / 1e9),
        tasks: p.tasks.toLocaleString('en-US'),
      });
    },
    stop: () => bar?.stop(),
  };
}
