import type { SetupKind, KindPart } from './setupKind.js';
import { quantile } from '../calibrate/stats.js';

/**
 * The error band of a prediction: how far measured step times of comparable validated setups fell from what the
 * model predicted for them. Comparable means the same kind (setupKind.ts), matched as closely as the residuals
 * allow: every part of the kind first, then fewer parts (`MATCH_LEVELS`); with fewer than `BAND_MIN_ROWS` rows at
 * every level there is no band, and the outputs say so.
 */

/** A validated row: which set, what kind of prediction, measured and predicted step time. */
export interface Residual {
  set: string;
  kind: SetupKind;
  measuredS: number;
  predictedS: number;
}

export interface ErrorBand {
  /** Rows the band rests on. */
  rows: number;
  /** The parts of the kind those rows share with the prediction. */
  matched: KindPart[];
  /** The sets they come from. */
  sets: string[];
  /** What the edges are: the 10th and 90th percentile, or with fewer than `PERCENTILE_MIN_ROWS` rows the extremes. */
  edges: 'p10-p90' | 'min-max';
  /** The low edge, median and high edge of measured / predicted − 1, in percent. */
  lowPct: number;
  medianPct: number;
  highPct: number;
}

/** Fewest rows a band may rest on. */
export const BAND_MIN_ROWS = 5;

/**
 * The band's edges: the 10th and the 90th percentile of the residuals; with fewer rows than this the lowest and the
 * highest, since interpolated percentiles of a handful of rows would claim a narrower band than the rows show.
 */
export const BAND_QUANTILES = { low: 0.1, high: 0.9 } as const;
export const PERCENTILE_MIN_ROWS = 10;

/**
 * The parts of the kind to match, from all of them to the GPU generation alone. The parallel style is kept longest:
 * its errors differ most (the FSDP runs are the most optimistic on every GPU), so a Hopper pipeline is judged by the
 * pipelines of other GPUs before the Hopper runs of other styles; the GPU generation alone is the last resort.
 */
export const MATCH_LEVELS: readonly KindPart[][] = [
  ['gpu', 'style', 'scale', 'host'],
  ['gpu', 'style', 'scale'],
  ['gpu', 'style'],
  ['style', 'scale'],
  ['style'],
  ['gpu'],
];

/** measured / predicted − 1 in percent: how much longer (positive) or shorter the real step was. */
export const residualPct = (r: Pick<Residual, 'measuredS' | 'predictedS'>): number =>
  100 * (r.measuredS / r.predictedS - 1);

export function bandOf(rows: readonly Residual[], matched: KindPart[]): ErrorBand {
  const pcts = rows.map(residualPct);
  const percentiles = rows.length >= PERCENTILE_MIN_ROWS;
  return {
    rows: rows.length,
    matched,
    sets: [...new Set(rows.map((r) => r.set))].sort(),
    edges: percentiles ? 'p10-p90' : 'min-max',
    lowPct: quantile(pcts, percentiles ? BAND_QUANTILES.low : 0),
    medianPct: quantile(pcts, 0.5),
    highPct: quantile(pcts, percentiles ? BAND_QUANTILES.high : 1),
  };
}

/** The band of a prediction of this kind, from the closest level with enough rows; undefined when none has. */
export function errorBandFor(kind: SetupKind, residuals: readonly Residual[]): ErrorBand | undefined {
  // FP8 and 16-bit training, and models with experts and dense ones, are told apart before any other part of the kind.
  const sameNumerics = residuals.filter(
    (r) => (r.kind.fp8 === true) === (kind.fp8 === true) && (r.kind.moe === true) === (kind.moe === true),
  );
  for (const level of MATCH_LEVELS) {
    const rows = sameNumerics.filter((r) => level.every((part) => r.kind[part] === kind[part]));
    if (rows.length >= BAND_MIN_ROWS) return bandOf(rows, level);
  }
  return undefined;
}

/** The step times the band spans around a prediction, s. */
export function bandRangeS(band: ErrorBand, predictedS: number): { lowS: number; highS: number } {
  return { lowS: predictedS * (1 + band.lowPct / 100), highS: predictedS * (1 + band.highPct / 100) };
}
