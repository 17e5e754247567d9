import { describe, expect, it } from 'vitest';
import { fitAlphaBeta, alphaBetaSeconds } from '../../src/calibrate/fitAlphaBeta.js';
import { fitGemm } from '../../src/calibrate/fitGemm.js';
import { fitProfile, noiseOf } from '../../src/calibrate/fit.js';
import { FitError, median, quantile, residuals, summarise, weightedLeastSquares } from '../../src/calibrate/stats.js';
import { measuredGemmNs } from '../../src/sim/workload/kernelTime.js';
import { noisy, syntheticRecords, TRUE, TRUE_GEMM } from './fixtures.js';

describe('least squares and summaries', () => {
  it('solves an exactly determined weighted system', () => {
    const [a, b] = weightedLeastSquares(
      [
        [1, 1],
        [1, 2],
        [1, 3],
      ],
      [3, 5, 7],
      [1, 1, 1],
    );
    expect(a).toBeCloseTo(1, 9);
    expect(b).toBeCloseTo(2, 9);
  });

  it('copes with features twelve orders of magnitude apart', () => {
    const rows = [1e3, 1e6, 1e9, 1e12].map((x) => [1, x]);
    const [a, b] = weightedLeastSquares(
      rows,
      rows.map((r) => 2e-6 + r[1] * 1e-10),
      [1, 1, 1, 1],
    );
    expect(a).toBeCloseTo(2e-6, 12);
    expect(b).toBeCloseTo(1e-10, 16);
  });

  it('refuses parameters the data do not determine', () => {
    expect(() =>
      weightedLeastSquares(
        [
          [1, 2],
          [2, 4],
          [3, 6],
        ],
        [1, 2, 3],
        [1, 1, 1],
      ),
    ).toThrow(FitError);
    expect(() => weightedLeastSquares([[1, 2]], [1], [1])).toThrow(/at least 2 points/);
  });

  it('summarises samples and rejects ones a broken measurement would give', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 2, 3])).toBe(2.5);
    expect(quantile([0, 10], 0.25)).toBe(2.5);
    const s = summarise([1, 1.1, 0.9]);
    expect(s.medianS).toBe(1);
    expect(s.spreadPct).toBeCloseTo(20, 9);
    expect(() => summarise([])).toThrow(FitError);
    expect(() => summarise([1, -1])).toThrow(/invalid time/);
    expect(() => summarise([1, NaN])).toThrow(/invalid time/);
    expect(residuals([1, 2], [1.1, 2]).worstPct).toBeCloseTo(10, 9);
  });
});

describe('α–β fitting', () => {
  const sizes = [4096, 65536, 1 << 20, 16 << 20, 256 << 20];

  it('recovers latency and bandwidth from measurements with 3% noise', () => {
    const n = noisy('ab', 0.03);
    const fit = fitAlphaBeta(sizes.map((bytes) => ({ bytes, seconds: (5e-6 + bytes / 20e9) * n() })));
    expect(fit.latencyS).toBeGreaterThan(5e-6 * 0.85);
    expect(fit.latencyS).toBeLessThan(5e-6 * 1.15);
    expect(fit.bandwidthGBps).toBeGreaterThan(20 * 0.95);
    expect(fit.bandwidthGBps).toBeLessThan(20 * 1.05);
    expect(fit.residuals.worstPct).toBeLessThan(10);
    expect(fit.points).toBe(5);
    expect([fit.minBytes, fit.maxBytes]).toEqual([4096, 256 << 20]);
  });

  it('weighs relative error, so small sizes still set the latency', () => {
    const fit = fitAlphaBeta(sizes.map((bytes) => ({ bytes, seconds: 1e-6 + bytes / 10e9 })));
    expect(alphaBetaSeconds(fit, 4096)).toBeCloseTo(1e-6 + 4096 / 10e9, 12);
  });

  it('fits through the origin instead of returning a negative latency', () => {
    const fit = fitAlphaBeta([
      { bytes: 1e6, seconds: 0.9e-4 },
      { bytes: 2e6, seconds: 2e-4 },
      { bytes: 4e6, seconds: 4.1e-4 },
    ]);
    expect(fit.latencyS).toBe(0);
    expect(fit.bandwidthGBps).toBeGreaterThan(9);
  });

  it('needs two distinct sizes and times that grow', () => {
    expect(() => fitAlphaBeta([{ bytes: 1, seconds: 1 }])).toThrow(/at least 2 sizes/);
    expect(() =>
      fitAlphaBeta([
        { bytes: 1, seconds: 1 },
        { bytes: 1, seconds: 2 },
      ]),
    ).toThrow(/different sizes/);
    expect(() =>
      fitAlphaBeta([
        { bytes: 1, seconds: 2 },
        { bytes: 1e6, seconds: 1 },
      ]),
    ).toThrow(/do not grow/);
  });
});

describe('GEMM model fitting', () => {
  const shapes: [number, number, number][] = [];
  for (const m of [64, 256, 1024, 1500])
    for (const n of [64, 300, 1024]) for (const k of [16, 128, 1024]) shapes.push([m, n, k]);
  const layout = { tileM: TRUE_GEMM.tileM, tileN: TRUE_GEMM.tileN, units: TRUE_GEMM.units, splitKMinK: 0 };
  const truth = (m: number, n: number, k: number) => measuredGemmNs({ m, n, k, batch: 1 }, TRUE_GEMM) * 1e-9;

  it('recovers the throughput of full waves and the per-tile fixed cost from noisy times', () => {
    const noise = noisy('gemm', 0.03);
    const fit = fitGemm(
      shapes.map(([m, n, k]) => ({ m, n, k, seconds: truth(m, n, k) * noise() })),
      layout,
    );
    expect(fit.ceilingTflops / TRUE_GEMM.ceilingTflops).toBeGreaterThan(0.95);
    expect(fit.ceilingTflops / TRUE_GEMM.ceilingTflops).toBeLessThan(1.05);
    expect(fit.smallKHalf).toBeGreaterThan(TRUE_GEMM.smallKHalf * 0.7);
    expect(fit.smallKHalf).toBeLessThan(TRUE_GEMM.smallKHalf * 1.3);
    expect(fit.points).toBe(shapes.length);
  });

  it('is exact on noiseless data and then needs no corrections', () => {
    const fit = fitGemm(
      shapes.map(([m, n, k]) => ({ m, n, k, seconds: truth(m, n, k) })),
      layout,
    );
    expect(fit.ceilingTflops).toBeCloseTo(TRUE_GEMM.ceilingTflops, 9);
    expect(fit.smallKHalf).toBeCloseTo(TRUE_GEMM.smallKHalf, 6);
    expect(fit.residuals.worstPct).toBeLessThan(1e-6);
    expect(fit.corrections).toBeUndefined();
  });

  it('keeps per-shape corrections when they predict left-out shapes better than the smooth model', () => {
    // A systematic effect the model lacks: shapes with m ≥ 1024 run 30% slower (say, a cache limit).
    const fit = fitGemm(
      shapes.map(([m, n, k]) => ({ m, n, k, seconds: truth(m, n, k) * (m >= 1024 ? 1.3 : 1) })),
      layout,
    );
    expect(fit.leaveOneOutPct.corrected).toBeLessThan(fit.leaveOneOutPct.model);
    expect(fit.corrections?.length).toBe(shapes.length);
    expect(fit.residuals.medianPct).toBeLessThan(fit.leaveOneOutPct.model);
  });

  it('scores the smooth model on shapes left out of its fit, as its name says', () => {
    // It was the error of the fit to all shapes at those same shapes (in-sample), set against the corrections'
    // true leave-one-out error: an unequal contest that its name, leaveOneOutPct.model, did not tell.
    const noise = noisy('loo', 0.05);
    const points = shapes.map(([m, n, k]) => ({ m, n, k, seconds: truth(m, n, k) * noise() }));
    const fit = fitGemm(points, layout);
    const loo = median(
      points.map((p, i) => {
        const others = fitGemm(
          points.filter((_, j) => j !== i),
          layout,
        );
        const smooth = { ...layout, ceilingTflops: others.ceilingTflops, smallKHalf: others.smallKHalf };
        const predicted = measuredGemmNs({ m: p.m, n: p.n, k: p.k, batch: 1 }, smooth) * 1e-9;
        return (100 * Math.abs(predicted - p.seconds)) / p.seconds;
      }),
    );
    expect(fit.leaveOneOutPct.model).toBeCloseTo(loo, 9);
  });

  it('needs three shapes', () => {
    expect(() => fitGemm([{ m: 1, n: 1, k: 1, seconds: 1 }], layout)).toThrow(/at least 3 shapes/);
  });
});

describe('fitting a whole profile', () => {
  it('recovers every constant of a synthetic calibration with 2% noise', () => {
    const { fit, warnings } = fitProfile(syntheticRecords(0.02), {
      gemmLayout: () => ({ tileM: 96, tileN: 128, units: 2, splitKMinK: 0 }),
    });
    expect(warnings).toEqual([]);
    expect(fit.launchS / TRUE.launchS).toBeGreaterThan(0.95);
    expect(fit.launchS / TRUE.launchS).toBeLessThan(1.05);
    expect(fit.copies.h2h.bandwidthGBps / TRUE.copyGBps).toBeCloseTo(1, 1);
    expect(fit.memoryBandwidthGBps).toBeCloseTo(2 * fit.copies.h2h.bandwidthGBps, 9);
    expect(fit.gemm.fp32!.ceilingTflops / TRUE_GEMM.ceilingTflops).toBeCloseTo(1, 1);
    const ar = fit.collectives.find((c) => c.op === 'all_reduce')!;
    expect(ar.bandwidthGBps / TRUE.allReduceAlgGBps).toBeCloseTo(1, 1);
    // nccl-tests bus bandwidth: all-reduce over 2 ranks is 2(n−1)/n = 1 × algbw, all-gather (n−1)/n = ½.
    expect(ar.busBandwidthGBps).toBeCloseTo(ar.bandwidthGBps, 9);
    const ag = fit.collectives.find((c) => c.op === 'all_gather')!;
    expect(ag.busBandwidthGBps).toBeCloseTo(ag.bandwidthGBps / 2, 9);
    expect(ag.latencyS / TRUE.allGatherLatencyS).toBeGreaterThan(0.8);
    expect(ag.latencyS / TRUE.allGatherLatencyS).toBeLessThan(1.2);
  });

  it('says which essential part is missing', () => {
    const records = syntheticRecords();
    const ctx = { gemmLayout: () => ({ tileM: 96, tileN: 128, units: 2, splitKMinK: 0 }) };
    expect(() =>
      fitProfile(
        records.filter((r) => r.id !== 'launch'),
        ctx,
      ),
    ).toThrow(/launch/);
    expect(() =>
      fitProfile(
        records.filter((r) => r.item.kind !== 'copy'),
        ctx,
      ),
    ).toThrow(/memory bandwidth/);
    expect(() =>
      fitProfile(
        records.filter((r) => r.item.kind !== 'gemm'),
        ctx,
      ),
    ).toThrow(/GEMM/);
  });

  it('measures noise as the spread of the repeats', () => {
    const noise = noiseOf(syntheticRecords(0.05));
    expect(noise.medianSpreadPct).toBeGreaterThan(2);
    expect(noise.worstSpreadPct).toBeGreaterThanOrEqual(noise.p90SpreadPct);
    expect(noiseOf([]).medianSpreadPct).toBe(0);
  });
});
