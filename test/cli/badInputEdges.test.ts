import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, expectBadInput } from '../helpers/badInput.js';
import { parseGpuCounts } from '../../src/sweep/scaleMath.js';

// Edges of issue 26 (item 9): each message says what is wrong in the user's words, not a library's or the system's.
describe('bad input at the edges', () => {
  const dir = mkdtempSync(join(tmpdir(), 'clustersim-edges-'));

  it('a scenario of several YAML documents says so, without naming a library call', async () => {
    const file = join(dir, 'multi.yaml');
    writeFileSync(file, 'name: a\n---\nname: b\n');
    const r = await cli('simulate', file);
    expectBadInput(r, 'holds more than one YAML document', "a '---' line starts another");
    expect(r.stderr).not.toContain('parseAllDocuments');
  });

  it('a folder given as --profile is a folder, not EISDIR', async () => {
    const r = await cli('simulate', 'scenarios/bert-large-ddp-2node.yaml', '--profile', 'scenarios');
    expectBadInput(r, 'cannot read profile scenarios: it is a folder, not a file');
    expect(r.stderr).not.toContain('EISDIR');
  });

  it('a GPU range past the simulator’s limit is refused, not swept', async () => {
    expect(() => parseGpuCounts('8..100000000000000000000')).toThrow(/more than the 262144 GPUs/);
    expect(() => parseGpuCounts('300000')).toThrow(/more than the 262144 GPUs/);
    expect(parseGpuCounts('8..32')).toEqual([8, 16, 32]);
    expectBadInput(await cli('scale', 'scenarios/bert-large-ddp-2node.yaml', '--gpus', '8..100000000000000000000'), 'more than the 262144 GPUs the simulator takes');
  });
});
