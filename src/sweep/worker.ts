/**
 * Worker thread of a parallel sweep (started by `runPoints` from the compiled `worker.js`): claims
 * points from the shared counter, largest first, and posts each row until none is left.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { simulatePoint } from './scale.js';
import type { PointReply, WorkerInput } from './pool.js';

const port = parentPort;
if (!port) throw new Error('sweep/worker.js runs only as a worker thread started by a sweep');
const { plans, tasks, next } = workerData as WorkerInput;
const counter = new Int32Array(next);
const send = (reply: PointReply) => port.postMessage(reply);

try {
  for (let k = Atomics.add(counter, 0, 1); k < tasks.length; k = Atomics.add(counter, 0, 1)) {
    const { id, series, gpus } = tasks[k];
    send({ id, row: simulatePoint(plans[series], gpus).row });
  }
  send({ done: true });
} catch (err) {
  const e = err instanceof Error ? err : new Error(String(err));
  send({ error: { name: e.name, message: e.message, stack: e.stack } });
}
