/**
 * Worker thread of a plan (started from the compiled `planWorker.js`): runs the tasks of the job's phase it claims,
 * pruning layouts or estimating or simulating candidates, and posts each result until none is left.
 */
import { serveTasks } from '../threads/taskPool.js';
import { planTask, type PlanJob } from './evaluate.js';

serveTasks<PlanJob, ReturnType<typeof planTask>>(planTask);
