/** Without a terminal, a progress line at least this often in long work (CI and GPU-run logs), ms. */
export const PLAIN_PROGRESS_EVERY_MS = 30_000;

/** Progress of work done item by item. */
export interface SweepProgress {
  /** One more item done; `label` says which. */
  tick(label: string): void;
  stop(): void;
}

/**
 * Progress as plain lines, for a log or a batch job: one when the first item is done, which tells how long an item
 * takes, then at most one every `PLAIN_PROGRESS_EVERY_MS`, and at the end one with the final count if the last line
 * did not have it. `writeLine` takes each line (stderr, in the commands).
 */
export function plainProgressLines(
  writeLine: (line: string) => void,
  what: string,
  total: number,
  nowMs: () => number = Date.now,
): SweepProgress {
  const startMs = nowMs();
  let done = 0;
  let shown = 0;
  let last = '';
  let lastLineMs: number | undefined;
  const line = (t: number) => {
    lastLineMs = t;
    shown = done;
    writeLine(`${what}: ${done}/${total} runs done in ${Math.round((t - startMs) / 1000)} s (last: ${last})`);
  };
  return {
    tick(label) {
      done += 1;
      last = label;
      const t = nowMs();
      if (lastLineMs === undefined || t - lastLineMs >= PLAIN_PROGRESS_EVERY_MS) line(t);
    },
    stop: () => {
      if (done > shown) line(nowMs());
    },
  };
}
