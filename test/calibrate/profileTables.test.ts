import { describe, expect, it } from 'vitest';
import { profileCollectiveTables } from '../../src/calibrate/applyProfile.js';
import { valueOf } from '../../src/calibrate/stats.js';
import { syntheticProfile } from './fixtures.js';

describe("a profile's collectives as measured tables", () => {
  it('gives one table per op and group size, sorted by size, at the statistic the fit used', () => {
    for (const backend of ['cuda', 'cpu'] as const) {
      const profile = syntheticProfile({
        backend,
        device: backend === 'cuda' ? 'NVIDIA A100-SXM4-80GB' : 'cpu',
        gpuPreset: backend === 'cuda' ? 'a100-sxm4-80gb' : undefined,
      });
      const tables = profileCollectiveTables(profile);
      const collectives = profile.measurements.filter((m) => m.id.startsWith('collective/'));
      expect(tables.map((t) => `${t.op}×${t.ranks}`).sort()).toEqual(['all_gather×2', 'all_reduce×2']);
      expect(tables.reduce((a, t) => a + t.points.length, 0)).toBe(collectives.length);
      for (const t of tables) {
        for (let i = 1; i < t.points.length; i++) expect(t.points[i].bytes).toBeGreaterThan(t.points[i - 1].bytes);
        for (const p of t.points) {
          const m = collectives.find((c) => c.id === `collective/${t.op}/${t.ranks}/${p.bytes}`)!;
          expect(p.timeNs).toBeCloseTo(valueOf(m, profile.statistic) * 1e9, 6);
        }
      }
    }
  });
});
