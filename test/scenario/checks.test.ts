import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadScenarioFile } from '../../src/scenario/load.js';
import { resolveScenario } from '../../src/scenario/resolve.js';

/** The out-of-sample checks the README and the validation log quote: each loads, and says what was measured where. */
describe('scenarios/checks', () => {
  const dir = 'scenarios/checks';
  const files = readdirSync(dir).filter((f) => f.endsWith('.yaml'));

  it('holds the three fms-fsdp Llama-2 runs', () => {
    expect(files.sort()).toEqual(['fms-fsdp-llama2-13b.yaml', 'fms-fsdp-llama2-70b.yaml', 'fms-fsdp-llama2-7b.yaml']);
  });

  it.each(files)('%s resolves, on 128 GPUs, and states its source, its measurement and its assumptions', (f) => {
    const text = readFileSync(join(dir, f), 'utf8');
    expect(text).toMatch(/foundation-model-stack\/fms-fsdp/);
    expect(text).toMatch(/measured \d+ tokens\/s per GPU/);
    expect(text).toMatch(/the network is an assumption/);
    const file = loadScenarioFile(join(dir, f));
    const s = resolveScenario(file.raw, file.source, file.baseDir);
    expect(s.cluster.nodes * s.cluster.node.gpusPerNode).toBe(128);
    expect(s.training.seqLen).toBe(4096);
    expect(s.training.kernels).toBe('eager'); // IBM ran eager PyTorch
  });
});
