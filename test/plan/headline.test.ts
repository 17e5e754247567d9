import { describe, expect, it } from 'vitest';
import { scenarioWithImports } from '../../src/scenario/importSettings.js';
import { loadScenarioFile } from '../../src/scenario/load.js';
import { planSearch } from '../../src/plan/search.js';
import { defaultSpace } from '../../src/plan/space.js';

/** Plans a bundled scenario on its own GPUs with the default space. */
async function planOf(file: string) {
  const { scenario } = scenarioWithImports(file, {}, []);
  const f = loadScenarioFile(file);
  const gpus = scenario.cluster.nodes * scenario.cluster.node.gpusPerNode;
  return planSearch(
    {
      raw: f.raw,
      source: f.source,
      baseDir: f.baseDir,
      scenario,
      sets: [],
      gpus,
      space: defaultSpace(scenario),
      top: 3,
    },
    { jobs: 1 },
  );
}

describe('plans of bundled scenarios', () => {
  it.each([
    'scenarios/bert-large-ddp-2node.yaml',
    'scenarios/llama2-7b-zero3-pcie.yaml',
    'scenarios/llama2-7b-zero3-nvlink.yaml',
    'scenarios/llama2-13b-tp8-nvswitch.yaml',
    'scenarios/llama2-13b-tp8-pcie.yaml',
  ])(
    '%s: the winner is at least as fast as the scenario’s own setup',
    async (file) => {
      const p = await planOf(file);
      expect(p.own, 'the own setup simulates').toBeDefined();
      expect(p.own!.sim.fits).toBe(true);
      expect(p.rows[0].sim.stepTimeS).toBeLessThanOrEqual(p.own!.sim.stepTimeS);
      expect(p.rows[0].sim.fits).toBe(true);
    },
    120_000,
  );
});
