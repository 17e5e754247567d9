import { resolveScenario, type Scenario } from '../../src/scenario/resolve.js';

/** Builds a resolved scenario from a plain object, as if read from a file. */
export function scenarioOf(raw: Record<string, unknown>): Scenario {
  return resolveScenario(raw, 'test', process.cwd());
}
