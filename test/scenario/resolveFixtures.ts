import { fileURLToPath } from 'node:url';
import { InvalidScenarioError } from '../../src/scenario/errors.js';
import { resolveScenario, type Scenario } from '../../src/scenario/resolve.js';

/** The repository root, where a scenario's relative paths are looked up in these tests. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A small valid scenario: BERT-Large on 2 DGX A100 (80 GB) nodes. */
export function base(): Record<string, unknown> {
  return {
    cluster: { preset: 'dgx-a100-80gb', nodes: 2 },
    model: { preset: 'bert-large' },
    training: { globalBatch: 64 },
  };
}

export function resolved(raw: unknown, baseDir = ROOT): Scenario {
  return resolveScenario(raw, 'test.yaml', baseDir);
}

/** The problems an invalid scenario is rejected with. */
export function problems(raw: unknown, baseDir = ROOT): { path: string; message: string }[] {
  try {
    resolved(raw, baseDir);
  } catch (err) {
    if (err instanceof InvalidScenarioError) return err.problems;
    throw err;
  }
  throw new Error('expected the scenario to be rejected');
}
