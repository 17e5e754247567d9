import { FitError, residuals, weightedLeastSquares, type Residuals } from './stats.js';

/**
 * The α–β (Hockney) model of a transfer: t(S) = α + S / β, latency α in seconds and bandwidth β in bytes per
 * second. Fitted by least squares on relative error (weights 1/t²), so a 4 KiB point counts as much as a
 * 1 GiB one; a negative latency is not physical, so the fit is then redone through the origin.
 */
export interface AlphaBetaFit {
  latencyS: number;
  /** 1 GB/s = 1e9 bytes/s. */
  bandwidthGBps: number;
  points: number;
  minBytes: number;
  maxBytes: number;
  /** Relative error of the fitted line at the measured points. */
  residuals: Residuals;
}

export interface SizedTime {
  bytes: number;
  seconds: number;
}

/** Time of a transfer of `bytes` under the model, in seconds. */
export function alphaBetaSeconds(fit: Pick<AlphaBetaFit, 'latencyS' | 'bandwidthGBps'>, bytes: number): number {
  return fit.latencyS + bytes / (fit.bandwidthGBps * 1e9);
}

export function fitAlphaBeta(points: readonly SizedTime[]): AlphaBetaFit {
  if (points.length < 2) throw new FitError(`an α–β fit needs at least 2 sizes, got ${points.length}`);
  if (new Set(points.map((p) => p.bytes)).size < 2) throw new FitError('an α–β fit needs at least 2 different sizes');
  const y = points.map((p) => p.seconds);
  const w = y.map((t) => 1 / (t * t));
  let [latencyS, sPerByte] = weightedLeastSquares(
    points.map((p) => [1, p.bytes]),
    y,
    w,
  );
  if (latencyS < 0) {
    latencyS = 0;
    [sPerByte] = weightedLeastSquares(
      points.map((p) => [p.bytes]),
      y,
      w,
    );
  }
  if (!(sPerByte > 0)) throw new FitError('the measured times do not grow with size, so no bandwidth can be fitted');
  const fit = { latencyS, bandwidthGBps: 1 / (sPerByte * 1e9) };
  return {
    ...fit,
    points: points.length,
    minBytes: Math.min(...points.map((p) => p.bytes)),
    maxBytes: Math.max(...points.map((p) => p.bytes)),
    residuals: residuals(
      y,
      points.map((p) => alphaBetaSeconds(fit, p.bytes)),
    ),
  };
}
