/** Worker thread of `npm run validate -- --all`: predicts the step-time tasks it claims. */
import { serveTasks } from '../threads/taskPool.js';
import { predictStepTask, type StepPrediction, type StepTaskJob } from './stepTaskPredict.js';

serveTasks<StepTaskJob, StepPrediction>(predictStepTask);
