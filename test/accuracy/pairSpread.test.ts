import { describe, expect, it } from 'vitest';
import { pairRatioErrorsPct, pairSpread, TIE_QUANTILE } from '../../src/accuracy/pairSpread.js';
import { storedResiduals, type StoredResidual } from '../../src/accuracy/residualStore.js';

const kind = { gpu: 'ampere', style: 'pipeline', scale: 'one-node', host: 'framework-host' } as const;
const row = (set: string, rankGroup: string | undefined, predictedS: number, measuredS: number): StoredResidual => ({
  set,
  index: 0,
  label: '',
  kind,
  predictedS,
  measuredS,
  ...(rankGroup ? { rankGroup } : {}),
});

describe('the spread of predicted ratios between splits of one job', () => {
  it(
    'is |(p_a / p_b) / (m_a / m_b) − 1| over pairs inside each group, ' + 'and nothing across groups or without one',
    () => {
      const rows = [
        // Group g: predicted 1 and 2, measured 1 and 2.5: the ratio 0.5 against 0.4, 25% off.
        row('s', 'g', 1, 1),
        row('s', 'g', 2, 2.5),
        // Group h of one row, a row with no group, and the same group name in another set: no pairs.
        row('s', 'h', 1, 3),
        row('s', undefined, 1, 9),
        row('t', 'g', 5, 1),
      ];
      const { errors, groups } = pairRatioErrorsPct(rows);
      expect(groups).toBe(1);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toBeCloseTo(25, 12);
    },
  );

  it(
    'takes the 80th percentile: ' + 'a difference beyond it keeps its order in 9 of 10 pairs if errors fall either way',
    () => {
      expect(TIE_QUANTILE).toBe(0.8);
      // One group of three: pair (a, b) predicted 1:1, measured 1:2, 100% off; (a, c) 1:2 against 1:2, 0%;
      // (b, c) 1:2 against 2:2, 50%. The 80th percentile of 0, 50, 100 (interpolated) is 80.
      const rows = [row('s', 'g', 1, 1), row('s', 'g', 1, 2), row('s', 'g', 2, 2)];
      const spread = pairSpread(rows);
      expect(spread?.pairs).toBe(3);
      expect(spread?.pct).toBeCloseTo(80, 12);
      expect(pairSpread([row('s', undefined, 1, 1)])).toBeUndefined();
    },
  );

  it('rests, in the stored residuals, on the groups of vTrain, Korthikanti 2022 and the MoE folding runs', () => {
    const spread = pairSpread(storedResiduals());
    expect(spread).toBeDefined();
    const sets = new Set(
      storedResiduals()
        .filter((r) => r.rankGroup !== undefined)
        .map((r) => r.set),
    );
    expect([...sets].sort()).toEqual(['megatron-sp22', 'moe-folding-h100', 'vtrain-multi', 'vtrain-single']);
    expect(spread!.groups).toBeGreaterThan(100);
  });
});
