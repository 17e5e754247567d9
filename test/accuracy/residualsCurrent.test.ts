import { describe, expect, it } from 'vitest';
import { storedResiduals } from '../../src/accuracy/residualStore.js';
import { STEP_SETS, stepTasks } from '../../src/validation/stepSets.js';
import { predictStepTask } from '../../src/validation/stepTaskPredict.js';

/**
 * data/validation-residuals.json holds what `npm run validate -- --all --write-residuals` predicted for every row of
 * every set; the error bands rest on it. A model change that moves a validated prediction must rewrite it. Predicting
 * every row takes minutes, so this re-predicts the first row of each set and checks the rest of the file against
 * the data it came from.
 */
describe('the stored validation residuals are current', () => {
  const stored = storedResiduals();
  const tasks = stepTasks(STEP_SETS);

  it('hold every row of every set, with its measured time', () => {
    expect(stored.map((r) => [r.set, r.label, r.measuredS])).toEqual(tasks.map((t) => [t.set, t.label, t.measuredS]));
  });

  it.each(STEP_SETS)('give the prediction the model makes now for the first row of %s', (set) => {
    const i = tasks.findIndex((t) => t.set === set);
    const now = predictStepTask({ tasks }, i);
    expect({ predictedS: stored[i].predictedS, kind: stored[i].kind }).toEqual({
      predictedS: now.predictedS,
      kind: now.kind,
    });
  });
});
