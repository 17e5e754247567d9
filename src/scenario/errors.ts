import { ScenarioError } from '../sim/errors.js';

/** One problem in a scenario: where it is and what is wrong. */
export interface Problem {
  path: string;
  message: string;
}

/** Several problems found at once in one scenario; the message lists them one per line. */
export class InvalidScenarioError extends ScenarioError {
  readonly problems: Problem[];

  constructor(source: string, problems: Problem[]) {
    super('', `${source}: ${problems.length} problem(s):\n` + problems.map((p) => `  ${p.path || '(top level)'}: ${p.message}`).join('\n'));
    this.name = 'InvalidScenarioError';
    this.problems = problems;
  }
}
