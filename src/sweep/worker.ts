/**
 * Worker thread of a parallel sweep (started by `runPoints` from the compiled `worker.js`): claims
 * points from the shared counter, largest first, and posts each row until none is left.
 */
import { serveTasks } from '../threads/taskPool.js';
import { simulatePoint } from './scale.js';
import type { PointsJob } from './pool.js';

serveTasks<PointsJob, ReturnType<typeof simulatePoint>['row']>(
  (job, id) => simulatePoint(job.plans[job.points[id].series], job.points[id].gpus).row,
);
