import { resolveScenario } from '../scenario/resolve.js';
import { simulateStep } from '../sim/simulateStep.js';
import { setupKind, type SetupKind } from '../accuracy/setupKind.js';
import type { StepTask } from './stepSets.js';

/** The tasks of one `validate --all` run, plain data for worker threads. */
export interface StepTaskJob {
  tasks: StepTask[];
}

export interface StepPrediction {
  predictedS: number;
  kind: SetupKind;
}

/** Task `i` simulated: its predicted step time and the kind of prediction it is (setupKind.ts). */
export function predictStepTask(job: StepTaskJob, i: number): StepPrediction {
  const t = job.tasks[i];
  const setup = resolveScenario(t.raw, t.set, t.baseDir);
  return { predictedS: simulateStep(setup).result.stepTimeS, kind: setupKind(setup) };
}
