import { scenarioWithImports } from '../scenario/importSettings.js';
import type { Scenario } from '../scenario/resolve.js';

/** Reads, overrides (`--set`) and validates a scenario file; a problem with a `--set` value says so. */
export function scenarioFromFile(path: string, sets: readonly string[] = []): Scenario {
  return scenarioWithImports(path, {}, sets).scenario;
}

/** commander collector for repeatable options. */
export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}
