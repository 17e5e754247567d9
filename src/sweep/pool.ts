import { compiledWorker, runTasks } from '../threads/taskPool.js';
import type { Scenario } from '../scenario/resolve.js';
import type { StepRun } from '../sim/simulateStep.js';
import type { ScaleRow } from './scaleMath.js';
import { simulatePoint, type SeriesPlan } from './scale.js';
import type { SweepPoint } from './grid.js';

/** What the sweep's worker threads are given: the plans of every scenario and the points (task i is point i). */
export interface PointsJob {
  plans: SeriesPlan[];
  points: SweepPoint[];
}

export interface RunPointsOptions {
  /** Threads to use, this one included; 1 runs every point in this thread, one after another. */
  jobs: number;
  /** Called as each point is done (in the order they finish, not table order). */
  onPoint?: (point: SweepPoint, row: ScaleRow) => void;
  /** Points simulated in this thread only: each step with its trace, e.g. to keep one for a report. */
  onRun?: (point: SweepPoint, scenario: Scenario, run: StepRun) => void;
  /** When it aborts, no point is started any more; those in flight finish. */
  signal?: AbortSignal;
}

export interface PointsResult {
  /** One row per point, in the order of the points given (whatever order they finished in). */
  rows: ScaleRow[];
  /** Worker threads started besides this one (0 when every point ran in this thread). */
  workers: number;
  /** The signal stopped the sweep: `rows` holds only the points that were done (the others are empty slots). */
  interrupted: boolean;
}

/** The compiled worker next to this module (none when running from TypeScript sources, as under the test runner). */
function workerUrl(): URL | undefined {
  return compiledWorker(new URL('./worker.js', import.meta.url));
}

/** Whether this build can run points on worker threads (false when running from TypeScript sources). */
export function threadsAvailable(): boolean {
  return workerUrl() !== undefined;
}

function simulateHere(plans: readonly SeriesPlan[], point: SweepPoint, options: RunPointsOptions): ScaleRow {
  const { row, scenario, run } = simulatePoint(plans[point.series], point.gpus);
  if (scenario && run) options.onRun?.(point, scenario, run);
  return row;
}

/**
 * Simulates points of a sweep, each with `simulatePoint`, on up to `jobs` threads (never more threads than points;
 * with a signal and no `onRun`, all of them workers while this one coordinates, see `runTasks`). The rows are the same,
 * value for value, as one thread gives: a point's row depends only on its plan and GPU count, and rows are put back in
 * the order of `points`. Threads claim points largest first — the cost of a point grows with its GPU count —
 * the longest-processing-time rule, so the biggest point does not start last while the other threads sit
 * idle. Runs in this thread alone, in table order, when `jobs` is 1, when there is at most one point, or
 * when no compiled worker is available.
 */
export async function runPoints(
  plans: readonly SeriesPlan[],
  points: readonly SweepPoint[],
  options: RunPointsOptions,
): Promise<PointsResult> {
  const ids = points.map((_, i) => i);
  const { results, workers, interrupted } = await runTasks<PointsJob, ScaleRow>({
    jobs: options.jobs,
    worker: workerUrl(),
    job: { plans: [...plans], points: [...points] },
    ids,
    handOut: [...ids].sort((a, b) => points[b].gpus - points[a].gpus || a - b),
    runHere: (id) => simulateHere(plans, points[id], options),
    onResult: (id, row) => options.onPoint?.(points[id], row),
    signal: options.signal,
    // A run kept for a report must be simulated here (a trace is too big to copy between threads).
    coordinateOnly: options.signal !== undefined && options.onRun === undefined,
  });
  return { rows: results, workers, interrupted };
}
