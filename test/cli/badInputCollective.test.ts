import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { cli, expectBadInput } from '../helpers/badInput.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const LLAMA_16 = join(ROOT, 'scenarios/llama2-7b-ddp-16node.yaml');

describe('bad input: collective sizes and numbers', () => {
  it.each([['12XB'], ['-5'], ['abc'], ['1.5.2M']])("rejects --min-bytes '%s' and lists the units", async (size) => {
    expectBadInput(
      await cli('collective', '--cluster', 'dgx-a100-80gb', '--min-bytes', size),
      `--min-bytes: '${size}' is not a size; use bytes (32768) or a number with a unit: ` +
        `K, M, G, T (×1024), KiB, MiB, GiB, TiB, or KB, MB, GB, TB (×1000), in either case`,
    );
  });

  it('rejects a size that is not a whole number of bytes, and takes one that is', async () => {
    expectBadInput(
      await cli('collective', '--cluster', 'dgx-a100-80gb', '--min-bytes', '1.5', '--max-bytes', '4KiB'),
      "--min-bytes: '1.5' is not a whole number of bytes; " +
        'give a whole count (1.5 KiB = 1536 is fine, 1.5 bytes is not)',
    );
    const ok = await cli(
      'collective',
      '--cluster',
      'dgx-a100-80gb',
      '--min-bytes',
      '1.5KiB',
      '--max-bytes',
      '3KiB',
      '--json',
    );
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout).map((r: { bytes: number }) => r.bytes)).toEqual([1536, 3072]);
    // 4.1 × 1e6 is not exactly whole in floating point; it is 4,100,000 bytes all the same.
    const decimal = await cli(
      'collective',
      '--cluster',
      'dgx-a100-80gb',
      '--min-bytes',
      '4.1MB',
      '--max-bytes',
      '4.1MB',
      '--json',
    );
    expect(JSON.parse(decimal.stdout).map((r: { bytes: number }) => r.bytes)).toEqual([4100000]);
  });

  it('rejects a size of zero bytes', async () => {
    expectBadInput(
      await cli('collective', '--cluster', 'dgx-a100-80gb', '--min-bytes', '0'),
      "--min-bytes: must be at least 1 byte, got '0'",
    );
  });

  it('rejects a bad --max-bytes and a range that ends below its start', async () => {
    expectBadInput(
      await cli('collective', '--cluster', 'dgx-a100-80gb', '--max-bytes', '8 parsecs'),
      "--max-bytes: '8 parsecs' is not a size",
    );
    expectBadInput(
      await cli('collective', '--cluster', 'dgx-a100-80gb', '--min-bytes', '1GiB', '--max-bytes', '1MiB'),
      '--max-bytes (1048576) is smaller than --min-bytes (1073741824)',
    );
  });

  it('refuses sizes that hold no whole float to move (per rank for all_gather)', async () => {
    expectBadInput(
      await cli(
        'collective',
        '--cluster',
        'dgx-a100-80gb',
        '--op',
        'all_gather',
        '--min-bytes',
        '8',
        '--max-bytes',
        '16',
      ),
      '--max-bytes: 16 B holds no whole float per rank (8 ranks × 4 B = 32 B at least); raise it',
    );
    expectBadInput(
      await cli('collective', '--cluster', 'dgx-a100-80gb', '--min-bytes', '2', '--max-bytes', '3'),
      '--max-bytes: 3 B holds no whole float (4 B); raise it',
    );
  });

  it('rejects non-numeric and out-of-range counts', async () => {
    expectBadInput(
      await cli('collective', '--cluster', 'dgx-a100-80gb', '--nodes', 'two'),
      "--nodes: expected a whole number ≥ 1, got 'two'",
    );
    expectBadInput(
      await cli('collective', '--cluster', 'dgx-a100-80gb', '--gpus', '99'),
      '--gpus: 99 is more than the 8 GPUs of 1 × dgx-a100-80gb; add --nodes 13 (8 GPUs per node)',
    );
    for (const factor of ['1', '0.5', 'two']) {
      expectBadInput(
        await cli('collective', '--cluster', 'dgx-a100-80gb', '--step-factor', factor),
        `--step-factor: expected a whole number ≥ 2, got '${factor}'`,
      );
    }
  });
});

describe('bad input: the NICs of a node', () => {
  it(
    'refuses a NIC count that splits the GPUs of a node unevenly ' +
      '(10 NICs ran slower than 8), in collective and in a scenario',
    async () => {
      const why =
        '10 NICs for 8 GPUs: give a count that divides the GPUs per node or is a multiple of it (1, 2, 4, 8, 16, ...)';
      expectBadInput(
        await cli('collective', '--cluster', 'dgx-a100-80gb', '--nodes', '2', '--nics-per-node', '10'),
        `--nics-per-node: ${why}`,
      );
      const r = await cli('simulate', LLAMA_16, '--set', 'cluster.node.nicsPerNode=10');
      expectBadInput(r, `cluster.node.nicsPerNode: ${why}`);
      for (const fine of ['4', '16'])
        expect(
          (
            await cli(
              'collective',
              '--cluster',
              'dgx-a100-80gb',
              '--nodes',
              '2',
              '--nics-per-node',
              fine,
              '--max-bytes',
              '1MiB',
            )
          ).code,
        ).toBe(0);
    },
  );
});

describe('bad input: a forced algorithm the group cannot run', () => {
  it(
    'refuses a hierarchical all-reduce over GPUs that fill the ' +
      'last node only in part, and runs one that fills whole nodes',
    async () => {
      // 12 GPUs of 2 × 8: 8 on the first node, 4 on the second; the two-level scheme needs the same count on each.
      expectBadInput(
        await cli(
          'collective',
          '--cluster',
          'dgx-a100-80gb',
          '--nodes',
          '2',
          '--gpus',
          '12',
          '--algorithm',
          'hierarchical',
          '--max-bytes',
          '1MiB',
        ),
        '--algorithm hierarchical: needs the same number of GPUs on every node',
      );
      for (const gpus of ['16', '6']) {
        const ok = await cli(
          'collective',
          '--cluster',
          'dgx-a100-80gb',
          '--nodes',
          '2',
          '--gpus',
          gpus,
          '--algorithm',
          'hierarchical',
          '--min-bytes',
          '1MiB',
          '--max-bytes',
          '1MiB',
          '--json',
        );
        expect(ok.code, ok.stderr).toBe(0);
      }
    },
  );
});
