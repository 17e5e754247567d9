import type { SweepProgress } from '../report/progressLines.js';

/**
 * Where a validation run shows the progress of its rows: given how many rows there are, it returns what each done
 * row ticks. The command passes it in (src/cli: stderr, a counter on a terminal, plain lines in a log); the runners
 * print nothing themselves.
 */
export type RowProgress = (total: number) => SweepProgress;
