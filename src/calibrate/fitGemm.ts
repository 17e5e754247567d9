import type { MeasuredGemm } from '../sim/hardware/types.js';
import { gemmCorrection, measuredGemmNs, measuredGemmWaves } from '../sim/workload/kernelTime.js';
import { FitError, median, residuals, weightedLeastSquares, type Residuals } from './stats.js';

/**
 * Fits the calibrated GEMM model of `MeasuredGemm` (src/sim/hardware/types.ts) to measured GEMM times.
 * With W = 2·tileM·tileN·units·waves the model is linear in two unknowns,
 *   t = W·kPerTile / R + W·smallKHalf / R,
 * so R (→ ceilingTflops) and smallKHalf come from one weighted least-squares solve (weights 1/t², i.e. relative
 * error). Times must already exclude launch overhead (the simulator adds it back per kernel).
 */

/** Layout of the GEMM implementation: what the quantisation is computed with; not fitted. */
export interface GemmLayout {
  tileM: number;
  tileN: number;
  units: number;
  splitKMinK: number;
}

export interface GemmPoint {
  m: number;
  n: number;
  k: number;
  /** Kernel time without launch overhead, seconds. */
  seconds: number;
}

export interface GemmFit extends MeasuredGemm {
  points: number;
  /** Error of the model as stored (with corrections when they are used) at the measured shapes. */
  residuals: Residuals;
  /** Median leave-one-out error (%) of the smooth model alone and with interpolated corrections. */
  leaveOneOutPct: { model: number; corrected: number };
}

function modelSeconds(p: GemmPoint, mg: MeasuredGemm): number {
  return measuredGemmNs({ m: p.m, n: p.n, k: p.k, batch: 1 }, mg) * 1e-9;
}

/** The least-squares smooth model (no corrections) of `points`, all with positive time. */
function smoothFit(points: readonly GemmPoint[], layout: GemmLayout): MeasuredGemm {
  const rows = points.map((p) => {
    const { waves, kPerTile } = measuredGemmWaves(
      { m: p.m, n: p.n, k: p.k, batch: 1 },
      { ...layout, ceilingTflops: 1, smallKHalf: 0 },
    );
    const w = 2 * layout.tileM * layout.tileN * layout.units * waves;
    return [w * kPerTile, w];
  });
  const y = points.map((p) => p.seconds);
  const weights = y.map((t) => 1 / (t * t));
  let [perFlop, fixed] = weightedLeastSquares(rows, y, weights);
  if (fixed < 0) {
    fixed = 0;
    [perFlop] = weightedLeastSquares(
      rows.map((r) => [r[0]]),
      y,
      weights,
    );
  }
  if (!(perFlop > 0)) throw new FitError('GEMM times do not grow with the work, so no throughput can be fitted');
  return { ...layout, ceilingTflops: 1 / perFlop / 1e12, smallKHalf: fixed / perFlop };
}

/**
 * Fits ceilingTflops and smallKHalf; keeps per-shape corrections only if they predict left-out shapes clearly better.
 */
export function fitGemm(points: readonly GemmPoint[], layout: GemmLayout): GemmFit {
  const usable = points.filter((p) => p.seconds > 0);
  if (usable.length < 3)
    throw new FitError(`a GEMM fit needs at least 3 shapes with positive time, got ${usable.length}`);
  const y = usable.map((p) => p.seconds);
  const smooth = smoothFit(usable, layout);
  const model = usable.map((p) => modelSeconds(p, smooth));
  const corrections = usable.map((p, i) => ({ m: p.m, n: p.n, k: p.k, ratio: p.seconds / model[i] }));
  // Both left out for real: the smooth model refitted without shape i (the fit at all shapes would have seen it).
  const looModel = median(
    usable.map((p, i) => {
      let left: MeasuredGemm;
      try {
        left = smoothFit(
          usable.filter((_, j) => j !== i),
          layout,
        );
      } catch {
        left = smooth;
      }
      return (100 * Math.abs(modelSeconds(p, left) - p.seconds)) / p.seconds;
    }),
  );
  const looCorrected = median(
    usable.map((p, i) => {
      const others = corrections.filter((_, j) => j !== i);
      const predicted = model[i] * gemmCorrection({ m: p.m, n: p.n, k: p.k, batch: 1 }, others);
      return (100 * Math.abs(predicted - p.seconds)) / p.seconds;
    }),
  );
  // Corrections must earn their place: clearly better (10%, and 0.2 points) on shapes they did not see.
  const better = looModel - looCorrected > Math.max(0.2, 0.1 * looModel);
  const chosen: MeasuredGemm = better ? { ...smooth, corrections } : smooth;
  return {
    ...chosen,
    points: usable.length,
    residuals: residuals(
      y,
      usable.map((p) => modelSeconds(p, chosen)),
    ),
    leaveOneOutPct: { model: looModel, corrected: looCorrected },
  };
}
