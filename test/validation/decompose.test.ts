import { describe, expect, it } from 'vitest';
import { fitStepParts, type TimedRun } from '../../src/validation/decompose.js';

describe('fitStepParts (T = a·L·n + b·n + c0 + c1·L)', () => {
  it('recovers the four parts exactly from times built with them', () => {
    const a = 3.1;
    const b = 7.4;
    const c0 = 2.5;
    const c1 = 0.375;
    const runs: TimedRun[] = [];
    for (const layers of [12, 16, 20, 24])
      for (const n of [2, 4, 8, 16])
        runs.push({ layers, microBatches: n, timeMs: a * layers * n + b * n + c0 + c1 * layers });
    const p = fitStepParts(runs)!;
    expect(p.perLayerMicroBatchMs).toBeCloseTo(a, 9);
    expect(p.perMicroBatchMs).toBeCloseTo(b, 9);
    expect(p.perStepMs(0)).toBeCloseTo(c0, 9);
    expect(p.perStepMs(24)).toBeCloseTo(c0 + 24 * c1, 9);
  });

  it('is undefined when one layer count cannot separate per-layer from per-micro-batch time', () => {
    expect(fitStepParts([2, 4, 8].map((n) => ({ layers: 12, microBatches: n, timeMs: 40 * n + 3 })))).toBeUndefined();
  });
});
