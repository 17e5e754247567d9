import { describe, expect, it } from 'vitest';
import { kendallTauB, rankGroup, rankingSummary } from '../../src/validation/ranking.js';

describe('ranking quality of predictions', () => {
  it("computes Kendall's tau-b as its closed form on small cases", () => {
    expect(kendallTauB([1, 2, 3, 4], [10, 20, 30, 40])).toBe(1);
    expect(kendallTauB([1, 2, 3, 4], [40, 30, 20, 10])).toBe(-1);
    // 6 pairs: (1,2)(1,3)(2,3)(1,4)(2,4)(3,4); swapping the last two makes one discordant: (5 − 1) / 6.
    expect(kendallTauB([1, 2, 3, 4], [1, 2, 4, 3])).toBeCloseTo(4 / 6, 12);
    // One tie on the first side: 5 untied pairs there, 6 on the other; 5 concordant: 5 / √(5·6).
    expect(kendallTauB([1, 1, 2, 3], [1, 2, 3, 4])).toBeCloseTo(5 / Math.sqrt(30), 12);
    expect(kendallTauB([1, 1], [2, 3])).toBeNaN();
  });

  it('scores a group by whether the predicted-fastest is the measured-fastest and by the regret of running it', () => {
    const right = rankGroup([
      { measuredS: 1.0, predictedS: 0.9 },
      { measuredS: 1.2, predictedS: 1.1 },
    ]);
    expect(right).toEqual({ rows: 2, top1: true, regret: 0, tau: 1 });
    const wrong = rankGroup([
      { measuredS: 1.0, predictedS: 0.9 },
      { measuredS: 1.25, predictedS: 0.8 },
      { measuredS: 2.0, predictedS: 1.5 },
    ]);
    expect(wrong.top1).toBe(false);
    expect(wrong.regret).toBeCloseTo(0.25, 12);
    // Pairs: (a,b) discordant, (a,c) and (b,c) concordant: (2 − 1) / 3.
    expect(wrong.tau).toBeCloseTo(1 / 3, 12);
  });

  it('summarises the groups of several rows and leaves single rows and rows without a group out', () => {
    const rows = [
      { g: 'x', measuredS: 1, predictedS: 1 },
      { g: 'x', measuredS: 2, predictedS: 2 },
      { g: 'y', measuredS: 1, predictedS: 3 },
      { g: 'y', measuredS: 1.5, predictedS: 2 },
      { g: 'z', measuredS: 5, predictedS: 5 },
      { g: undefined, measuredS: 5, predictedS: 5 },
    ];
    const s = rankingSummary(rows, (r) => r.g)!;
    expect(s.groups).toBe(2);
    expect(s.top1Right).toBe(1);
    expect(s.meanRegret).toBeCloseTo(0.25, 12);
    expect(s.worstRegret).toBeCloseTo(0.5, 12);
    expect(s.meanTau).toBeCloseTo(0, 12);
    expect(rankingSummary(rows.slice(4), (r) => r.g)).toBeUndefined();
  });
});
