import { describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli.js';

describe('NVLS only where the NVSwitch has it', () => {
  it('collective --algorithm nvls on an A100 node or a PCIe node: exit 2, naming the nodes that have it', async () => {
    for (const node of ['dgx-a100-80gb', 'pcie-8gpu']) {
      const r = await cli(
        'collective',
        '--cluster',
        node,
        '--algorithm',
        'nvls',
        '--min-bytes',
        '1GiB',
        '--max-bytes',
        '1GiB',
      );
      expect(r.code).toBe(2);
      expect(r.out).toBe('');
      expect(r.err).toContain(
        `--algorithm nvls needs NVLink SHARP in third-generation NVSwitch, ` +
          `which ${node} lacks (nodes with it: dgx-h100, hgx-h200, hgx-b200, gb200-nvl72)`,
      );
    }
    const h100 = await cli(
      'collective',
      '--cluster',
      'dgx-h100',
      '--algorithm',
      'nvls',
      '--min-bytes',
      '1GiB',
      '--max-bytes',
      '1GiB',
      '--json',
    );
    expect(h100.code).toBe(0);
    expect(JSON.parse(h100.out)[0].algorithm).toBe('nvls');
  });

  it('a scenario forcing comm.algorithm nvls on an A100 node: a problem at comm.algorithm', async () => {
    const r = await cli('simulate', 'scenarios/bert-large-ddp-2node.yaml', '--set', 'comm.algorithm=nvls');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/comm\.algorithm: nvls needs NVLink SHARP .* \[from --set comm\.algorithm=nvls\]/);
  });
});
