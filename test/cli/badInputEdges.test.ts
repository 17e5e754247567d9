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
    expectBadInput(
      await cli('scale', 'scenarios/bert-large-ddp-2node.yaml', '--gpus', '8..100000000000000000000'),
      'more than the 262144 GPUs the simulator takes',
    );
  });
});

describe('papercuts (issue 26, item 17)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'clustersim-papercuts-'));

  it('takes a model preset given by its name alone, as a GPU preset is', async () => {
    const file = join(dir, 'model-name.yaml');
    writeFileSync(
      file,
      'name: x\n' +
        'cluster: { preset: dgx-a100-80gb, nodes: 1 }\n' +
        'model: llama2-7b\n' +
        'training: { globalBatch: 8, microBatch: 1 }\n',
    );
    const byName = await cli('simulate', file, '--json', '--alternatives', '0');
    expect(byName.code, byName.stderr).toBe(0);
    writeFileSync(
      file,
      'name: x\n' +
        'cluster: { preset: dgx-a100-80gb, nodes: 1 }\n' +
        'model: { preset: llama2-7b }\n' +
        'training: { globalBatch: 8, microBatch: 1 }\n',
    );
    const byMapping = await cli('simulate', file, '--json', '--alternatives', '0');
    expect(byName.stdout).toBe(byMapping.stdout);
    writeFileSync(
      file,
      'name: x\n' +
        'cluster: { preset: dgx-a100-80gb, nodes: 1 }\n' +
        'model: llama9\n' +
        'training: { globalBatch: 8, microBatch: 1 }\n',
    );
    expectBadInput(await cli('simulate', file), "model.preset: unknown model preset 'llama9'");
  });

  it('says 1 GPU, not 1 GPUs', async () => {
    const one = [
      '--set',
      'cluster.nodes=1',
      '--set',
      'cluster.node.gpusPerNode=1',
      '--set',
      'cluster.node.nicsPerNode=1',
    ];
    const r = await cli(
      'simulate',
      'scenarios/llama2-7b-zero3-nvlink.yaml',
      ...one,
      '--set',
      'parallel.zero=0',
      '--alternatives',
      '0',
    );
    expect(r.stdout).toContain('(1 GPU), seed');
    const bad = await cli('simulate', 'scenarios/bert-large-ddp-2node.yaml', ...one, '--set', 'parallel.dp=16');
    expectBadInput(bad, "the cluster's 1 GPU (1 node × 1)");
  });

  it(
    'lets a bundled scenario change its node count with --set (issue 26, ' + 'item 16): no fixed dp in the files',
    async () => {
      const r = await cli(
        'simulate',
        'scenarios/bert-large-ddp-2node.yaml',
        '--set',
        'cluster.nodes=4',
        '--json',
        '--alternatives',
        '0',
      );
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout).parallel.dp).toBe(32);
    },
  );
});

describe('the host memory of CPU offload in --json (issue 26, item 9)', () => {
  it('has capacityBytes and fits exactly when the node states its host memory', async () => {
    const base = ['memory', 'scenarios/llama2-7b-zero3-pcie.yaml', '--set', 'parallel.offload=cpu', '--json'];
    const unstated = JSON.parse((await cli(...base)).stdout).host;
    expect(Object.keys(unstated).sort()).toEqual(['bytesPerNode', 'shortfallBytes']);
    const stated = JSON.parse((await cli(...base, '--set', 'cluster.node.hostMemoryGiB=512')).stdout).host;
    expect(stated.capacityBytes).toBe(512 * 2 ** 30);
    expect(stated.fits).toBe(stated.bytesPerNode <= stated.capacityBytes);
  });
});
