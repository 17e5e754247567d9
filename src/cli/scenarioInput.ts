import { applyOverrides, loadScenarioFile } from '../scenario/load.js';
import { resolveScenario, type Scenario } from '../scenario/resolve.js';

/** Reads, overrides (`--set`) and validates a scenario file. */
export function scenarioFromFile(path: string, sets: readonly string[] = []): Scenario {
  const file = loadScenarioFile(path);
  return resolveScenario(applyOverrides(file.raw, sets), file.source, file.baseDir);
}

/** commander collector for repeatable options. */
export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}
