import { describe, expect, it } from 'vitest';
import { BAND_MIN_ROWS, bandRangeS, errorBandFor, residualPct, type Residual } from '../../src/accuracy/errorBand.js';
import { quantile } from '../../src/calibrate/stats.js';
import type { SetupKind } from '../../src/accuracy/setupKind.js';

const kind = (over: Partial<SetupKind> = {}): SetupKind => ({
  gpu: 'ampere',
  style: 'pipeline',
  scale: 'multi-node',
  host: 'kernels-only',
  ...over,
});
/** A row that measured `pct` percent more (or less) than predicted. */
const row = (pct: number, k: SetupKind = kind(), set = 'a'): Residual => ({
  set,
  kind: k,
  predictedS: 1,
  measuredS: 1 + pct / 100,
});

describe('error band of a prediction', () => {
  it('rests an FP8 prediction on FP8 runs only, and a 16-bit one on 16-bit runs only', () => {
    const fp8 = kind({ fp8: true });
    const rows = [
      ...Array(BAND_MIN_ROWS)
        .fill(0)
        .map(() => row(10, fp8, 'fp8')),
      ...[1, 2, 3, 4, 5].map((p) => row(p)),
    ];
    expect(errorBandFor(fp8, rows)!.medianPct).toBeCloseTo(10, 9);
    expect(errorBandFor(fp8, rows)!.sets).toEqual(['fp8']);
    expect(errorBandFor(kind(), rows)!.medianPct).toBeCloseTo(3, 9);
    // Too few FP8 runs anywhere: no band, rather than the 16-bit runs' one.
    expect(errorBandFor(fp8, rows.slice(1))).toBeUndefined();
  });

  it('interpolates quantiles between order statistics', () => {
    expect(quantile([1, 2, 3, 4, 5], 0.5)).toBe(3);
    // 0.1 × 4 = 0.4 of the way from 1 to 2.
    expect(quantile([1, 2, 3, 4, 5], 0.1)).toBeCloseTo(1.4, 12);
    expect(quantile([1, 2, 3, 4, 5], 0.9)).toBeCloseTo(4.6, 12);
    expect(quantile([7], 0.9)).toBe(7);
  });

  it('reads a residual as how much longer the real step was than the prediction', () => {
    expect(residualPct({ measuredS: 1.1, predictedS: 1 })).toBeCloseTo(10, 12);
    expect(residualPct({ measuredS: 0.8, predictedS: 1 })).toBeCloseTo(-20, 12);
  });

  it('takes the 10th and 90th percentile of the rows of the same kind', () => {
    const rows = [0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100].map((p) => row(p));
    const band = errorBandFor(kind(), rows)!;
    expect(band.rows).toBe(11);
    expect(band.matched).toEqual(['gpu', 'style', 'scale', 'host']);
    expect(band.lowPct).toBeCloseTo(10, 9);
    expect(band.medianPct).toBeCloseTo(50, 9);
    expect(band.highPct).toBeCloseTo(90, 9);
    expect(bandRangeS(band, 2)).toEqual({ lowS: expect.closeTo(2.2, 9), highS: expect.closeTo(3.8, 9) });
  });

  it('matches fewer parts of the kind when the closest level has too few rows', () => {
    const sameAll = Array.from({ length: BAND_MIN_ROWS - 1 }, () => row(5));
    const otherHost = Array.from({ length: BAND_MIN_ROWS }, () => row(-10, kind({ host: 'framework-host' }), 'b'));
    const band = errorBandFor(kind(), [...sameAll, ...otherHost])!;
    expect(band.matched).toEqual(['gpu', 'style', 'scale']);
    expect(band.rows).toBe(2 * BAND_MIN_ROWS - 1);
    expect(band.sets).toEqual(['a', 'b']);
    const otherGpu = Array.from({ length: BAND_MIN_ROWS }, () => row(3, kind({ gpu: 'hopper', scale: 'one-node' })));
    expect(errorBandFor(kind(), otherGpu)!.matched).toEqual(['style']);
    expect(errorBandFor(kind({ scale: 'one-node' }), otherGpu)!.matched).toEqual(['style', 'scale']);
  });

  it('keeps the parallel style longer than the GPU generation, and gives no band when neither has the rows', () => {
    const otherStyle = Array.from({ length: 10 }, () => row(1, kind({ style: 'data' })));
    const otherGpu = Array.from({ length: 10 }, () => row(2, kind({ style: 'sharded-data', gpu: 'hopper' })));
    expect(errorBandFor(kind({ style: 'sharded-data' }), [...otherStyle, ...otherGpu])!.matched).toEqual([
      'style',
      'scale',
    ]);
    expect(errorBandFor(kind({ style: 'sharded-data' }), otherStyle)!.matched).toEqual(['gpu']);
    expect(errorBandFor(kind({ style: 'sharded-data', gpu: 'volta' }), otherStyle)).toBeUndefined();
  });

  it('takes the extremes rather than interpolated percentiles of fewer than 10 rows', () => {
    const band = errorBandFor(
      kind(),
      [2, 4, 6, 8, 30].map((p) => row(p)),
    )!;
    expect(band).toMatchObject({ edges: 'min-max', rows: 5 });
    expect(band.lowPct).toBeCloseTo(2, 9);
    expect(band.medianPct).toBeCloseTo(6, 9);
    expect(band.highPct).toBeCloseTo(30, 9);
  });
});
