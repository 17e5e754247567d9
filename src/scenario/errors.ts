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
    super('', `${source}: ${problems.length} ${problems.length === 1 ? 'problem' : 'problems'}:\n` + problems.map((p) => `  ${p.path || '(top level)'}: ${p.message}`).join('\n'));
    this.name = 'InvalidScenarioError';
    this.problems = problems;
  }
}

/** A `ScenarioError` as a problem: its path, and its message without the path in front. */
export function problemOf(err: ScenarioError): Problem {
  if (err instanceof InvalidScenarioError) throw new Error('problemOf: an InvalidScenarioError holds several problems; use .problems');
  const prefix = `${err.path}: `;
  return { path: err.path, message: err.path && err.message.startsWith(prefix) ? err.message.slice(prefix.length) : err.message };
}
