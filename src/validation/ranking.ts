/**
 * How well predictions rank the ways of running one job: for each group of rows that are the same model on the
 * same GPUs with the same batch, split differently, whether the predicted-fastest is the measured-fastest, the
 * regret of running the predicted-fastest (its measured time over the measured best, minus 1) and Kendall's tau-b
 * between predicted and measured times.
 */

export interface RankedRow {
  measuredS: number;
  predictedS: number;
}

export interface GroupRanking {
  rows: number;
  /** The predicted-fastest row is (one of) the measured-fastest. */
  top1: boolean;
  /** measured(predicted-fastest) / measured best − 1. */
  regret: number;
  /** Kendall's tau-b of predicted against measured; NaN when either side is all ties. */
  tau: number;
}

const argMin = (xs: readonly number[]): number => xs.reduce((best, x, i) => (x < xs[best] ? i : best), 0);

/**
 * Kendall's tau-b: (concordant − discordant) / √((n0 − ties in a)(n0 − ties in b)), n0 = n(n − 1)/2 pairs; a pair tied
 * on both sides counts in both tie counts.
 */
export function kendallTauB(a: readonly number[], b: readonly number[]): number {
  let concordant = 0;
  let discordant = 0;
  let tiesA = 0;
  let tiesB = 0;
  for (let i = 0; i < a.length; i++) {
    for (let j = i + 1; j < a.length; j++) {
      const da = Math.sign(a[i] - a[j]);
      const db = Math.sign(b[i] - b[j]);
      if (da === 0) tiesA++;
      if (db === 0) tiesB++;
      if (da !== 0 && db !== 0) {
        if (da === db) concordant++;
        else discordant++;
      }
    }
  }
  const pairs = (a.length * (a.length - 1)) / 2;
  const denominator = Math.sqrt((pairs - tiesA) * (pairs - tiesB));
  return denominator === 0 ? NaN : (concordant - discordant) / denominator;
}

export function rankGroup(rows: readonly RankedRow[]): GroupRanking {
  const measured = rows.map((r) => r.measuredS);
  const predicted = rows.map((r) => r.predictedS);
  const best = Math.min(...measured);
  const chosen = measured[argMin(predicted)];
  return { rows: rows.length, top1: chosen === best, regret: chosen / best - 1, tau: kendallTauB(predicted, measured) };
}

export interface RankingSummary {
  groups: number;
  top1Right: number;
  meanRegret: number;
  worstRegret: number;
  /** Mean tau-b over the groups where it is defined. */
  meanTau: number;
}

/** Groups rows by `key` (rows without one, and groups of one row, are left out) and summarises their rankings. */
export function rankingSummary<T extends RankedRow>(
  rows: readonly T[],
  key: (row: T) => string | undefined,
): RankingSummary | undefined {
  const groups = new Map<string, T[]>();
  for (const r of rows) {
    const k = key(r);
    if (k !== undefined) groups.set(k, [...(groups.get(k) ?? []), r]);
  }
  const ranked = [...groups.values()].filter((g) => g.length > 1).map(rankGroup);
  if (ranked.length === 0) return undefined;
  const taus = ranked.map((g) => g.tau).filter((t) => !Number.isNaN(t));
  return {
    groups: ranked.length,
    top1Right: ranked.filter((g) => g.top1).length,
    meanRegret: ranked.reduce((a, g) => a + g.regret, 0) / ranked.length,
    worstRegret: Math.max(...ranked.map((g) => g.regret)),
    meanTau: taus.length === 0 ? NaN : taus.reduce((a, t) => a + t, 0) / taus.length,
  };
}
