import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli.js';

/**
 * The example reports under reports/ that the README shows are what the current code produces (`npm run reports`
 * regenerates them): their scaling CSVs, which hold every figure of the charts, are simulated again and compared.
 */
describe('the committed example reports', () => {
  const dir = mkdtempSync(join(tmpdir(), 'clustersim-examples-'));
  it.each([
    ['scale-bert-large-strong.csv', ['scale', 'scenarios/bert-large-ddp-2node.yaml', '--gpus', '1..32', '--mode', 'strong']],
    ['scale-llama2-7b-ib-vs-roce-weak.csv', ['scale', 'scenarios/llama2-7b-ddp-16node.yaml', '--compare', 'reports/inputs/llama2-7b-ddp-16node-roce100.yaml', '--gpus', '8..1024', '--mode', 'weak']],
  ])('reports/%s is current (run npm run reports after a model change)', async (file, args) => {
    const csv = join(dir, file);
    const r = await cli(...args, '--jobs', '1', '--csv', csv);
    expect(r.code, r.err).toBe(0);
    expect(readFileSync(csv, 'utf8')).toBe(readFileSync(join('reports', file), 'utf8'));
  }, 120_000);
});
