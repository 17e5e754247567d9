import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Scenario } from '../scenario/resolve.js';
import type { StepRun } from '../sim/simulateStep.js';
import type { ScaleRow } from './scaleMath.js';
import { simulatePoint, type SeriesPlan } from './scale.js';
import type { SweepPoint } from './grid.js';

/**
 * What a worker thread is started with: the plans of every scenario, the points in the order they are
 * handed out, and a shared counter (one Int32) from which every thread claims the next point.
 */
export interface WorkerInput {
  plans: SeriesPlan[];
  /** Points in hand-out order; `id` is each one's position in the list `runPoints` was given. */
  tasks: PointTask[];
  next: SharedArrayBuffer;
}

/** A point to simulate: `id` is its position in the list `runPoints` was given. */
export interface PointTask {
  id: number;
  series: number;
  gpus: number;
}

/** A worker's messages: a row, what went wrong (an internal error; scenario problems are rows), or that it ran out of points. */
export type PointReply =
  | { id: number; row: ScaleRow }
  | { error: { name: string; message: string; stack?: string } }
  | { done: true };

export interface RunPointsOptions {
  /** Threads to use, this one included; 1 runs every point in this thread, one after another. */
  jobs: number;
  /** Called as each point is done (in the order they finish, not table order). */
  onPoint?: (point: SweepPoint, row: ScaleRow) => void;
  /** Points simulated in this thread only: each step with its trace, e.g. to keep one for a report. */
  onRun?: (point: SweepPoint, scenario: Scenario, run: StepRun) => void;
}

export interface PointsResult {
  /** One row per point, in the order of the points given (whatever order they finished in). */
  rows: ScaleRow[];
  /** Worker threads started besides this one (0 when every point ran in this thread). */
  workers: number;
}

/** One thread per core by default: Node's count of the processors this process may use. */
export function defaultJobs(): number {
  return availableParallelism();
}

/**
 * The compiled worker next to this module. Under the test runner the modules are TypeScript sources
 * and there is no `worker.js` beside them (a worker cannot load TypeScript), so sweeps run in-thread.
 */
function workerUrl(): URL | undefined {
  const url = new URL('./worker.js', import.meta.url);
  return url.protocol === 'file:' && existsSync(fileURLToPath(url)) ? url : undefined;
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

function runInThread(plans: readonly SeriesPlan[], points: readonly SweepPoint[], options: RunPointsOptions): PointsResult {
  const rows = points.map((point) => {
    const row = simulateHere(plans, point, options);
    options.onPoint?.(point, row);
    return row;
  });
  return { rows, workers: 0 };
}

function errorFrom(e: { name: string; message: string; stack?: string }): Error {
  const err = new Error(e.message);
  err.name = e.name;
  if (e.stack) err.stack = e.stack;
  return err;
}

/**
 * This thread and `workers` worker threads claim points from one shared counter until none is left
 * (work stealing without messages, so a thread never waits for the main one to hand it work). Points
 * are claimed largest first — the cost of a point grows with its GPU count — the longest-processing-
 * time rule, so the biggest point does not start last while the other threads sit idle. Rows go back
 * to their places, so the order does not show in the result.
 */
async function runWithWorkers(url: URL, plans: readonly SeriesPlan[], points: readonly SweepPoint[], workers: number, options: RunPointsOptions): Promise<PointsResult> {
  const rows: ScaleRow[] = new Array(points.length);
  const order = points.map((_, i) => i).sort((a, b) => points[b].gpus - points[a].gpus || a - b);
  const tasks: PointTask[] = order.map((id) => ({ id, series: points[id].series, gpus: points[id].gpus }));
  const next = new SharedArrayBuffer(4);
  const counter = new Int32Array(next);
  const stop = () => Atomics.store(counter, 0, tasks.length);
  let failure: Error | undefined;
  let closing = false;
  const fail = (err: Error) => {
    failure ??= err;
    stop();
  };
  const finish = (point: SweepPoint, id: number, row: ScaleRow) => {
    rows[id] = row;
    try {
      options.onPoint?.(point, row);
    } catch (err) {
      fail(err as Error);
    }
  };

  const input: WorkerInput = { plans: [...plans], tasks, next };
  const pool = Array.from({ length: workers }, () => new Worker(url, { workerData: input }));
  const finished = pool.map(
    (w) =>
      new Promise<void>((resolve) => {
        w.on('message', (reply: PointReply) => {
          if ('done' in reply) resolve();
          else if ('error' in reply) {
            fail(errorFrom(reply.error));
            resolve();
          } else finish(points[reply.id], reply.id, reply.row);
        });
        w.on('error', (err) => {
          fail(err);
          resolve();
        });
        w.on('exit', (code) => {
          if (code !== 0 && !closing) fail(new Error(`a sweep worker thread stopped (exit code ${code}) before its points were done`));
          resolve();
        });
      }),
  );

  try {
    for (let k = Atomics.add(counter, 0, 1); k < tasks.length; k = Atomics.add(counter, 0, 1)) {
      const id = tasks[k].id;
      finish(points[id], id, simulateHere(plans, points[id], options));
      // Let the workers' rows in (the progress bar moves) before the next point.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  } catch (err) {
    fail(err as Error);
  }
  // On a failure the workers are stopped at once rather than left to finish the point they hold.
  if (!failure) await Promise.all(finished);
  closing = true;
  await Promise.all(pool.map((w) => w.terminate()));
  if (failure) throw failure;
  return { rows, workers };
}

/**
 * Simulates points of a sweep, each with `simulatePoint`, on up to `jobs` threads: this one and
 * `jobs − 1` worker threads (never more threads than points). The rows are the same, value for value,
 * as one thread gives: a point's row depends only on its plan and GPU count, rows cross threads by
 * structured clone (exact for numbers), and they are put back in the order of `points`. Runs in this
 * thread alone, in table order, when `jobs` is 1, when there is at most one point, or when no compiled
 * worker is available.
 */
export async function runPoints(plans: readonly SeriesPlan[], points: readonly SweepPoint[], options: RunPointsOptions): Promise<PointsResult> {
  const threads = Math.min(Math.max(1, Math.floor(options.jobs)), points.length);
  const url = threads > 1 ? workerUrl() : undefined;
  if (!url) return runInThread(plans, points, options);
  return runWithWorkers(url, plans, points, threads - 1, options);
}
