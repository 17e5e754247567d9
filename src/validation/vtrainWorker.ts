/** Worker thread of `npm run validate` (the vTrain set): predicts the rows it claims. */
import { serveTasks } from '../threads/taskPool.js';
import { predictVtrainRow, type VtrainJob } from './vtrainPredict.js';

serveTasks<VtrainJob, number>(predictVtrainRow);
