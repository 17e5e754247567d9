import { describe, expect, it } from 'vitest';
import { loadAddon } from '../../src/calibrate/native.js';
import type { BenchItem } from '../../src/calibrate/types.js';

/** The CPU kernels themselves, on small data: right answers, sane timings, argument checks. */
describe.skipIf(process.env.CLUSTERSIM_SKIP_NATIVE === '1')('the native CPU backend', () => {
  const addon = loadAddon();
  const rep = { warmup: 0, repeats: 2, inner: 1 };

  it('computes GEMMs exactly as a plain triple loop, whatever the tile edges and threads', () => {
    for (const [m, n, k] of [
      [1, 1, 1],
      [97, 129, 300],
      [200, 17, 5],
      [96, 128, 256],
      [5, 300, 513],
    ]) {
      for (const threads of [1, 3]) expect(addon.cpuCheck({ what: 'gemm', threads, m, n, k })).toBeLessThan(1e-5);
    }
  });

  it('runs ring collectives between threads to the exact result', () => {
    for (const what of ['all_reduce', 'all_gather', 'reduce_scatter'] as const) {
      for (const [ranks, floats] of [
        [2, 2],
        [3, 1000],
        [4, 4099],
      ])
        expect(addon.cpuCheck({ what, ranks, floats })).toBe(0);
    }
  });

  it('returns one positive time per repeat for every kind of measurement', async () => {
    const items: BenchItem[] = [
      { kind: 'gemm', dtype: 'fp32', m: 64, n: 64, k: 64, threads: 1, clock: 'thread', ...rep },
      { kind: 'launch', threads: 2, ...rep, inner: 10 },
      { kind: 'copy', direction: 'h2h', pinned: true, bytes: 4096, footprintBytes: 65536, clock: 'thread', ...rep },
      { kind: 'collective', op: 'all_reduce', ranks: 2, bytes: 4096, footprintBytes: 65536, clock: 'thread', ...rep },
      {
        kind: 'program',
        dtype: 'fp32',
        gemms: [{ m: 32, n: 32, k: 32 }],
        copies: [{ bytes: 1024, after: 0 }],
        direction: 'h2h',
        run: 'both',
        threads: 1,
        clock: 'thread',
        ...rep,
      },
      {
        kind: 'program',
        dtype: 'fp32',
        gemms: [{ m: 32, n: 32, k: 32 }],
        copies: [{ bytes: 1024, after: 0 }],
        direction: 'h2h',
        run: 'both',
        threads: 1,
        clock: 'wall',
        ...rep,
      },
    ];
    for (const item of items) {
      const r = await addon.runCpu(item);
      expect(r.samplesS).toHaveLength(2);
      for (const s of r.samplesS) expect(s).toBeGreaterThan(0);
    }
  });

  it('rejects requests it cannot time, with a reason', async () => {
    await expect(addon.runCpu({ kind: 'gemm', dtype: 'bf16', m: 8, n: 8, k: 8, ...rep })).rejects.toThrow(
      /fp32 GEMMs only/,
    );
    await expect(
      addon.runCpu({ kind: 'gemm', dtype: 'fp32', m: 8, n: 8, k: 8, threads: 2, clock: 'thread', ...rep }),
    ).rejects.toThrow(/thread clock needs/);
    await expect(addon.runCpu({ kind: 'copy', direction: 'h2d', pinned: true, bytes: 8, ...rep })).rejects.toThrow(
      /host to host/,
    );
    await expect(addon.runCpu({ kind: 'collective', op: 'all_reduce', ranks: 1, bytes: 8, ...rep })).rejects.toThrow(
      /ranks must be between 2/,
    );
    await expect(addon.runCpu({ kind: 'nope', ...rep } as unknown as BenchItem)).rejects.toThrow(
      /unknown measurement kind/,
    );
    expect(() => addon.runCpu({ kind: 'gemm', dtype: 'fp32', m: 1.5, n: 8, k: 8, ...rep })).toThrow(
      /item.m must be a whole number/,
    );
    expect(() => addon.runCpu({ kind: 'launch', warmup: 0, repeats: 0, inner: 1 })).toThrow(
      /repeats and inner must be ≥ 1/,
    );
  });
});
