import { resolveScenario } from '../scenario/resolve.js';
import { simulateStep } from '../sim/simulateStep.js';
import { vtrainSetup, type VtrainRow, type VtrainScenarioOptions } from './vtrain.js';

/** The rows of the vTrain set to predict and the options of the run, plain data for worker threads. */
export interface VtrainJob {
  rows: VtrainRow[];
  opts: VtrainScenarioOptions;
}

/** Predicted iteration time of row `i`, ms. */
export function predictVtrainRow(job: VtrainJob, i: number): number {
  return simulateStep(vtrainSetup(job.rows[i], resolveScenario, job.opts)).result.stepTimeS * 1e3;
}
