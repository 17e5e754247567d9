import { quantile } from '../calibrate/stats.js';
import type { StoredResidual } from './residualStore.js';

/**
 * How far the model's ratio of two step times strays from the measured ratio, over pairs of validated rows that are
 * one job split two ways (rows of one ranking group, src/validation/ranking.ts): |(p_a / p_b) / (m_a / m_b) − 1|.
 * A planner that finds one split d% slower than another is wrong about their order when the pair's error exceeds d in
 * the wrong direction; with errors of either sign alike, that happens at most half as often as the error exceeds d.
 */

/** The share of validated pairs whose ratio error a difference must exceed for the order to hold 9 times in 10. */
export const TIE_QUANTILE = 0.8;

export interface PairSpread {
  /** Pairs of rows the spread rests on. */
  pairs: number;
  /** Ranking groups they come from. */
  groups: number;
  /** The `TIE_QUANTILE` quantile of the pairs' ratio errors, in percent. */
  pct: number;
}

/** The ratio errors of every pair inside each ranking group, in percent. */
export function pairRatioErrorsPct(rows: readonly StoredResidual[]): { errors: number[]; groups: number } {
  const groups = new Map<string, StoredResidual[]>();
  for (const r of rows) {
    if (r.rankGroup === undefined) continue;
    const key = `${r.set}\u0000${r.rankGroup}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  const errors: number[] = [];
  let used = 0;
  for (const g of groups.values()) {
    if (g.length < 2) continue;
    used++;
    for (let i = 0; i < g.length; i++) {
      for (let j = i + 1; j < g.length; j++) {
        const predicted = g[i].predictedS / g[j].predictedS;
        const measured = g[i].measuredS / g[j].measuredS;
        errors.push(100 * Math.abs(predicted / measured - 1));
      }
    }
  }
  return { errors, groups: used };
}

/** The spread a difference between two predictions must exceed to be trusted; undefined without validated pairs. */
export function pairSpread(rows: readonly StoredResidual[]): PairSpread | undefined {
  const { errors, groups } = pairRatioErrorsPct(rows);
  if (errors.length === 0) return undefined;
  return { pairs: errors.length, groups, pct: quantile(errors, TIE_QUANTILE) };
}
