import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { BUILT_BIN, buildCli } from '../cli/builtCli.js';
import { GOLDEN_SCENARIOS, goldenOf, goldenPath, type Golden } from '../../scripts/goldenOutput.mjs';

// A guard for refactors, not a check of the model: it says only that what the built CLI prints for each bundled
// scenario is what it printed when the golden files were written (`npm run golden`). A change that means to alter
// the output rewrites them and says why in its commit.

const scenarios = GOLDEN_SCENARIOS;
const CONCURRENT = 2;
const results = new Map<string, Golden>();

beforeAll(async () => {
  await buildCli();
  const queue = [...scenarios];
  const worker = async () => {
    for (let s = queue.shift(); s !== undefined; s = queue.shift()) results.set(s, await goldenOf(s, BUILT_BIN));
  };
  await Promise.all(Array.from({ length: CONCURRENT }, worker));
}, 600_000);

describe('every bundled scenario prints what its golden file holds', () => {
  for (const scenario of scenarios) {
    it(scenario, () => {
      const expected = JSON.parse(readFileSync(goldenPath(scenario), 'utf8')) as Golden;
      const actual = results.get(scenario)!;
      expect(actual.simulate).toEqual(expected.simulate);
      expect(actual.trace).toEqual(expected.trace);
      expect(actual.stdoutSha256).toBe(expected.stdoutSha256);
    });
  }
});
