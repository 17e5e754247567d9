import { describe, expect, it } from 'vitest';
import { readProfile, type Profile } from '../../src/calibrate/profile.js';
import { anchorItems } from '../../src/calibrate/validateRun.js';
import { median, valueOf } from '../../src/calibrate/stats.js';

/** The measured H200 profile (reports/calibration/h200): 1,472 measurements of one GPU. */
const h200 = readProfile('reports/calibration/h200/profile.json');

describe('drift anchors (calibration measurements validate retakes before and after its cases)', () => {
  it(
    'takes one GEMM and one pinned copy on the H200: ' +
      'at least as long as their kind’s median, the steadiest of those',
    () => {
      const anchors = anchorItems(h200, 1);
      expect(anchors.map((a) => a.item.kind)).toEqual(['gemm', 'copy']);
      const byId = new Map(h200.measurements.map((m) => [m.id, m]));
      for (const a of anchors) {
        const kind = a.id.split('/')[0];
        const peers = h200.measurements.filter((m) => m.id.split('/')[0] === kind && !m.id.includes('pageable'));
        const medianS = median(peers.map((m) => valueOf(m, h200.statistic)));
        const self = byId.get(a.id)!;
        expect(valueOf(self, h200.statistic)).toBeGreaterThanOrEqual(medianS);
        const longPeers = peers.filter((m) => valueOf(m, h200.statistic) >= medianS);
        expect(self.spreadPct).toBe(Math.min(...longPeers.map((m) => m.spreadPct)));
      }
      expect(anchors.some((a) => a.id.includes('pageable'))).toBe(false);
    },
  );

  it('never takes a pageable copy or a short measurement, however steady', () => {
    const steady = (id: string, medianS: number, spreadPct: number) => ({
      id,
      group: id.split('/').slice(0, 2).join(' '),
      medianS,
      minS: medianS,
      maxS: medianS,
      spreadPct,
      samples: 5,
    });
    const profile: Profile = {
      ...h200,
      measurements: [
        steady('copy/d2h-pageable/1048576', 1e-3, 0),
        steady('copy/d2d/65536', 1e-6, 0),
        steady('copy/h2d-pinned/268435456', 5e-3, 2),
        steady('copy/d2h-pinned/268435456', 5e-3, 1),
        steady('gemm/bf16/128x128x128', 1e-6, 0),
        steady('gemm/bf16/8192x8192x8192', 1.3e-3, 3),
        steady('gemm/bf16/4096x4096x4096', 1.6e-4, 0.5),
      ],
    };
    expect(anchorItems(profile, 1).map((a) => a.id)).toEqual(['gemm/bf16/4096x4096x4096', 'copy/d2h-pinned/268435456']);
  });
});
