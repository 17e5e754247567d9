// Records what every bundled scenario's `simulate --json` prints and a digest of its trace (after `npm run build`):
// npm run golden. test/golden/bundledScenarios.test.ts fails when the built CLI prints anything else, so a refactor
// that claims byte-identical output is checked; a model change regenerates the files and says why in its commit.
import { writeFileSync } from 'node:fs';
import { GOLDEN_SCENARIOS, goldenOf, goldenPath } from './goldenOutput.mjs';

const only = process.argv.slice(2);
for (const scenario of GOLDEN_SCENARIOS) {
  if (only.length > 0 && !only.some((o) => scenario.includes(o))) continue;
  const started = Date.now();
  const golden = await goldenOf(scenario);
  writeFileSync(goldenPath(scenario), `${JSON.stringify(golden, null, 2)}\n`);
  console.log(`${scenario}: ${((Date.now() - started) / 1000).toFixed(1)} s, trace ${golden.trace.events} events`);
}
