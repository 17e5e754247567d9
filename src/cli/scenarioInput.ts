import { scenarioWithImports } from '../scenario/importSettings.js';
import type { Scenario } from '../scenario/resolve.js';

/**
 * Reads, overrides (`--set`) and validates a scenario file; a problem with a `--set` value says so.
 * @param warn called with each warning about a value the scenario left to a default
 */
export function scenarioFromFile(
  path: string,
  sets: readonly string[] = [],
  warn: (message: string) => void = () => {},
): Scenario {
  return scenarioWithImports(path, {}, sets, warn).scenario;
}

/** commander collector for repeatable options. */
export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}
