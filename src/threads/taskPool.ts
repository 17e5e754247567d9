import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parentPort, Worker, workerData } from 'node:worker_threads';

/**
 * A pool of worker threads that run numbered tasks of one job: every thread, this one included, claims the next
 * task from one shared counter until none is left (work stealing without messages, so no thread waits for the
 * main one to hand it work). A task's result must depend only on the job and its number, so which thread ran it
 * does not show: results cross threads by structured clone (exact for numbers) and go back to their places.
 */

/** One thread per core by default: Node's count of the processors this process may use. */
export function defaultJobs(): number {
  return availableParallelism();
}

/** What a worker thread is started with: the job, the task numbers in hand-out order, and the shared counter. */
export interface TaskPoolInput<I> {
  job: I;
  order: number[];
  next: SharedArrayBuffer;
}

/** A worker's messages: a task's result, what went wrong (an internal error), or that no task is left. */
export type TaskReply<R> =
  { id: number; result: R } | { error: { name: string; message: string; stack?: string } } | { done: true };

export interface RunTasksOptions<I, R> {
  /** Threads to use, this one included; 1 runs every task here. */
  jobs: number;
  /** The compiled worker module (see `compiledWorker`); undefined runs every task here. */
  worker: URL | undefined;
  job: I;
  /** The tasks to run, in the order one thread runs them. */
  ids: readonly number[];
  /** The order threads claim them in (default: `ids`), e.g. the costliest first. */
  handOut?: readonly number[];
  /** Runs task `id` in this thread. */
  runHere: (id: number) => R;
  /** Called as each task is done, in the order they finish (a throw stops the pool and is rethrown). */
  onResult?: (id: number, result: R) => void;
  /** When it aborts, no task is started any more; those in flight finish and are kept. */
  signal?: AbortSignal;
  /**
   * With workers, this thread runs no task itself, only hands out and collects (default: when a signal is given, so
   * that it sees the abort at once rather than after the task it holds); there are then as many workers as threads.
   */
  coordinateOnly?: boolean;
}

export interface TasksResult<R> {
  /** `results[id]` for every id run. */
  results: R[];
  /** Worker threads started besides this one (0 when every task ran here). */
  workers: number;
  /** The signal stopped the pool with tasks left (`results` holds those that ran). */
  interrupted: boolean;
}

/**
 * `url` (a compiled module beside the caller, `new URL('./x.js', import.meta.url)`) when it exists. Under the test
 * runner the modules are TypeScript sources with no `.js` beside them, and a worker cannot load TypeScript, so the
 * tasks then run in this thread.
 */
export function compiledWorker(url: URL): URL | undefined {
  return url.protocol === 'file:' && existsSync(fileURLToPath(url)) ? url : undefined;
}

function errorFrom(e: { name: string; message: string; stack?: string }): Error {
  const err = new Error(e.message);
  err.name = e.name;
  if (e.stack) err.stack = e.stack;
  return err;
}

/**
 * Waits until the event loop has polled for I/O and signals at least once. One `setImmediate` is not enough: a task
 * started before the loop's first turn (a command's first point, run straight from the script) is followed by a check
 * phase with no poll before it, so a Ctrl-C that came during that task was handled only after the next one.
 */
async function turnOfTheLoop(): Promise<void> {
  await new Promise<void>((resolve) => setImmediate(resolve));
  await new Promise<void>((resolve) => setImmediate(resolve));
}

/**
 * Runs the tasks `ids` on up to `jobs` threads: this one and `jobs − 1` worker threads (never more threads than
 * tasks), or all here, in the order of `ids`, when `jobs` is 1, there is one task, or no compiled worker exists.
 */
export async function runTasks<I, R>(o: RunTasksOptions<I, R>): Promise<TasksResult<R>> {
  const results: R[] = [];
  const threads = Math.min(Math.max(1, Math.floor(o.jobs)), o.ids.length);
  if (threads <= 1 || !o.worker) {
    for (const id of o.ids) {
      if (o.signal?.aborted) return { results, workers: 0, interrupted: true };
      results[id] = o.runHere(id);
      o.onResult?.(id, results[id]);
      // A signal can only come in between tasks.
      if (o.signal) await turnOfTheLoop();
    }
    return { results, workers: 0, interrupted: false };
  }
  const order = [...(o.handOut ?? o.ids)];
  const counter = new Int32Array(new SharedArrayBuffer(4));
  let failure: Error | undefined;
  let closing = false;
  const fail = (err: Error) => {
    failure ??= err;
    Atomics.store(counter, 0, order.length);
  };
  const finish = (id: number, result: R) => {
    results[id] = result;
    try {
      o.onResult?.(id, result);
    } catch (err) {
      fail(err as Error);
    }
  };
  const stopHandingOut = () => Atomics.store(counter, 0, order.length);
  o.signal?.addEventListener('abort', stopHandingOut, { once: true });
  if (o.signal?.aborted) stopHandingOut();
  const input: TaskPoolInput<I> = { job: o.job, order, next: counter.buffer as SharedArrayBuffer };
  const url = o.worker;
  const here = !(o.coordinateOnly ?? o.signal !== undefined);
  const pool = Array.from({ length: here ? threads - 1 : threads }, () => new Worker(url, { workerData: input }));
  const finished = pool.map(
    (w) =>
      new Promise<void>((resolve) => {
        w.on('message', (reply: TaskReply<R>) => {
          if ('done' in reply) resolve();
          else if ('error' in reply) {
            fail(errorFrom(reply.error));
            resolve();
          } else finish(reply.id, reply.result);
        });
        w.on('error', (err) => {
          fail(err);
          resolve();
        });
        w.on('exit', (code) => {
          if (code !== 0 && !closing)
            fail(new Error(`a worker thread stopped (exit code ${code}) before its tasks were done`));
          resolve();
        });
      }),
  );
  try {
    for (let k = here ? Atomics.add(counter, 0, 1) : order.length; k < order.length; k = Atomics.add(counter, 0, 1)) {
      finish(order[k], o.runHere(order[k]));
      // Let the workers' results (a progress display moves) and a Ctrl-C in before the next task.
      await turnOfTheLoop();
    }
  } catch (err) {
    fail(err as Error);
  }
  // On a failure the workers are stopped at once rather than left to finish the task they hold.
  if (!failure) await Promise.all(finished);
  closing = true;
  await Promise.all(pool.map((w) => w.terminate()));
  o.signal?.removeEventListener('abort', stopHandingOut);
  if (failure) throw failure;
  // A stop that came after the last task was handed out leaves nothing missing: not an interruption.
  const missing = o.ids.filter((id) => !(id in results));
  if (missing.length > 0 && !o.signal?.aborted)
    throw new Error(`the worker threads returned no result for task(s) ${missing.join(', ')}`);
  return { results, workers: pool.length, interrupted: missing.length > 0 };
}

/** The worker side: claims tasks from the shared counter and posts each result until none is left. */
export function serveTasks<I, R>(run: (job: I, id: number) => R): void {
  const port = parentPort;
  if (!port) throw new Error('this module runs only as a worker thread started by runTasks');
  const { job, order, next } = workerData as TaskPoolInput<I>;
  const counter = new Int32Array(next);
  const send = (reply: TaskReply<R>) => port.postMessage(reply);
  try {
    for (let k = Atomics.add(counter, 0, 1); k < order.length; k = Atomics.add(counter, 0, 1)) {
      send({ id: order[k], result: run(job, order[k]) });
    }
    send({ done: true });
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    send({ error: { name: e.name, message: e.message, stack: e.stack } });
  }
}
