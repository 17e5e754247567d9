import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { cli, expectBadInput } from '../helpers/badInput.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** Eight A100 80 GB on PCIe (a custom GPU in a pcie-8gpu node) with 100 Gb/s Ethernet. */
const PCIE = join(ROOT, 'scenarios/llama2-13b-tp8-pcie.yaml');
/** 16 HGX H200 nodes. */
const H200 = join(ROOT, 'scenarios/llama2-7b-ddp-16node.yaml');

const rowsOf = (stdout: string) => JSON.parse(stdout) as { bytes: number; timeUs: number }[];

describe('collective --scenario: the cluster a scenario file describes', () => {
  it(
    "times the collective on the scenario's own cluster, " +
      'custom GPU included, as the same cluster named by options',
    async () => {
      const fromFile = await cli(
        'collective',
        '--scenario',
        PCIE,
        '--op',
        'all_gather',
        '--max-bytes',
        '64MiB',
        '--json',
      );
      expect(fromFile.code).toBe(0);
      const text = await cli('collective', '--scenario', PCIE, '--op', 'all_gather', '--max-bytes', '64MiB');
      expect(text.stdout).toMatch(/all_gather over 8 GPUs, 1× pcie-8gpu with a100-sxm4-80gb, 100 Gb\/s ethernet/);
      // The pcie-8gpu preset with its own A100 40 GB moves the same bytes over the same
      // PCIe and network: the same times.
      const preset = await cli(
        'collective',
        '--cluster',
        'pcie-8gpu',
        '--op',
        'all_gather',
        '--max-bytes',
        '64MiB',
        '--json',
      );
      expect(rowsOf(fromFile.stdout).map((r) => r.timeUs)).toEqual(rowsOf(preset.stdout).map((r) => r.timeUs));
    },
  );

  it('takes the node count from the file, or from --nodes', async () => {
    const all = await cli('collective', '--scenario', H200, '--max-bytes', '1MiB');
    expect(all.stdout).toMatch(/over 128 GPUs, 16× hgx-h200/);
    const two = await cli('collective', '--scenario', H200, '--nodes', '2', '--max-bytes', '1MiB');
    expect(two.stdout).toMatch(/over 16 GPUs, 2× hgx-h200/);
    const byOptions = await cli('collective', '--cluster', 'hgx-h200', '--nodes', '2', '--max-bytes', '1MiB', '--json');
    const byFile = await cli('collective', '--scenario', H200, '--nodes', '2', '--max-bytes', '1MiB', '--json');
    expect(byFile.stdout).toBe(byOptions.stdout);
  });

  it('needs exactly one way of naming the cluster, and says which options the file replaces', async () => {
    expectBadInput(
      await cli('collective', '--max-bytes', '1MiB'),
      'name the cluster: --cluster <node preset> (see `clustersim presets`) or --scenario <file>',
    );
    expectBadInput(
      await cli('collective', '--scenario', H200, '--cluster', 'dgx-h100'),
      '--scenario and --cluster both name a cluster; give one of them',
    );
    expectBadInput(
      await cli('collective', '--scenario', H200, '--network', 'ib-hdr'),
      "--network: with --scenario the scenario's cluster section says it",
    );
    expectBadInput(await cli('collective', '--scenario', join(ROOT, 'no-such.yaml')), 'cannot read scenario file');
  });
});
