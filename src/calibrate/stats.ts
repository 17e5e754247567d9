import type { MeasurementSummary, SampleStatistic } from './types.js';

/** Small statistics for calibration: robust summaries and weighted linear least squares. */

export class FitError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FitError';
  }
}

/** Median of a non-empty list (mean of the middle two for even lengths). */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new FitError('median of no values');
  const s = [...values].sort((a, b) => a - b);
  const h = s.length >> 1;
  return s.length % 2 === 1 ? s[h] : (s[h - 1] + s[h]) / 2;
}

/** Linear-interpolated quantile q ∈ [0, 1] of a non-empty list. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) throw new FitError('quantile of no values');
  const s = [...values].sort((a, b) => a - b);
  const pos = Math.min(1, Math.max(0, q)) * (s.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return s[lo] + (s[hi] - s[lo]) * (pos - lo);
}

/**
 * Summarises raw samples (seconds). Rejects what a broken measurement would produce (no samples, a
 * negative, zero or non-finite time), so a bad native result cannot reach the fit.
 */
export function summarise(samplesS: readonly number[]): MeasurementSummary {
  if (samplesS.length === 0) throw new FitError('a measurement returned no samples');
  for (const s of samplesS) {
    if (!Number.isFinite(s) || s <= 0) throw new FitError(`a measurement returned an invalid time: ${s}`);
  }
  const medianS = median(samplesS);
  const minS = Math.min(...samplesS);
  const maxS = Math.max(...samplesS);
  return { medianS, minS, maxS, spreadPct: (100 * (maxS - minS)) / medianS, samples: samplesS.length };
}

/** The value of a summary under `statistic`, seconds. */
export function valueOf(s: MeasurementSummary, statistic: SampleStatistic): number {
  return statistic === 'min' ? s.minS : s.medianS;
}

/** Relative errors of a fit, in percent of the measured value. */
export interface Residuals {
  medianPct: number;
  worstPct: number;
  rmsPct: number;
}

/** |predicted − measured| / measured for each point, summarised. */
export function residuals(measured: readonly number[], predicted: readonly number[]): Residuals {
  if (measured.length === 0) return { medianPct: 0, worstPct: 0, rmsPct: 0 };
  const rel = measured.map((m, i) => (100 * Math.abs(predicted[i] - m)) / m);
  return {
    medianPct: median(rel),
    worstPct: Math.max(...rel),
    rmsPct: Math.sqrt(rel.reduce((a, r) => a + r * r, 0) / rel.length),
  };
}

/**
 * Solves min Σ w_i (y_i − x_i·β)² by the normal equations (XᵀWX)β = XᵀWy with partial pivoting.
 * Enough for the 1–3 parameter fits here; throws FitError when the columns are (nearly) dependent.
 */
export function weightedLeastSquares(
  rows: readonly number[][],
  y: readonly number[],
  weights: readonly number[],
): number[] {
  const p = rows[0]?.length ?? 0;
  if (rows.length < p || p === 0)
    throw new FitError(`least squares needs at least ${Math.max(p, 1)} points, got ${rows.length}`);
  // Columns are scaled to unit size first: feature magnitudes here span 1e0…1e12.
  const scale = Array.from({ length: p }, (_, j) => Math.max(...rows.map((r) => Math.abs(r[j]))) || 1);
  const a = Array.from({ length: p }, () => new Array<number>(p + 1).fill(0));
  rows.forEach((r, i) => {
    for (let j = 0; j < p; j++) {
      for (let k = 0; k < p; k++) a[j][k] += (weights[i] * r[j] * r[k]) / (scale[j] * scale[k]);
      a[j][p] += (weights[i] * r[j] * y[i]) / scale[j];
    }
  });
  for (let c = 0; c < p; c++) {
    let piv = c;
    for (let r = c + 1; r < p; r++) if (Math.abs(a[r][c]) > Math.abs(a[piv][c])) piv = r;
    [a[c], a[piv]] = [a[piv], a[c]];
    if (Math.abs(a[c][c]) < 1e-12 * Math.max(1, ...a.map((row) => Math.abs(row[c])))) {
      throw new FitError('least squares: the measurements do not determine the parameters (dependent columns)');
    }
    for (let r = 0; r < p; r++) {
      if (r === c) continue;
      const f = a[r][c] / a[c][c];
      for (let k = c; k <= p; k++) a[r][k] -= f * a[c][k];
    }
  }
  return a.map((row, j) => row[p] / row[j] / scale[j]);
}
