import { describe, expect, it } from 'vitest';
import { reachProbability, routingProblem } from '../../../src/sim/workload/routeSpread.js';

/** C(n, k) as a float, from its product form. */
function choose(n: number, k: number): number {
  let c = 1;
  for (let i = 0; i < k; i++) c = (c * (n - i)) / (i + 1);
  return c;
}

const V3 = { experts: 256, topK: 8, groups: 8, groupsPerToken: 4 };

describe('how far a token’s routed copies spread', () => {
  it('reaches s of E experts with 1 − C(E−s, k)/C(E, k) without a group limit', () => {
    const r = { experts: 8, topK: 2, groups: 1, groupsPerToken: 1 };
    expect(reachProbability(r, [[0, 2]])).toBeCloseTo(13 / 28, 12); // 1 − 15/28
    const wide = { experts: 256, topK: 8, groups: 1, groupsPerToken: 1 };
    expect(reachProbability(wide, [[32, 32]])).toBeCloseTo(1 - choose(224, 8) / choose(256, 8), 12);
  });

  it('reaches a whole group with M/G · (1 − C(M·E/G − |set|, k)/C(M·E/G, k)) under node-limited routing', () => {
    // DeepSeek-V3 on 8 nodes (report §2.1.2): 8 groups of 32 experts, 4 a token; one node holds one group.
    expect(reachProbability(V3, [[64, 32]])).toBeCloseTo(0.5 * (1 - choose(96, 8) / choose(128, 8)), 12);
    // One GPU of EP 64 holds 4 experts of one group.
    expect(reachProbability(V3, [[4, 4]])).toBeCloseTo(0.5 * (1 - choose(124, 8) / choose(128, 8)), 12);
  });

  it('picks each expert with chance k/E, so the singletons sum to k, and the whole set is always reached', () => {
    for (const r of [V3, { experts: 64, topK: 6, groups: 1, groupsPerToken: 1 }, { ...V3, groupsPerToken: 8 }]) {
      let sum = 0;
      for (let e = 0; e < r.experts; e++) sum += reachProbability(r, [[e, 1]]);
      expect(sum).toBeCloseTo(r.topK, 9);
      expect(reachProbability(r, [[0, r.experts]])).toBeCloseTo(1, 12);
    }
  });

  it('counts a set split over groups as one (two halves of one node reach it as the node does)', () => {
    const split = reachProbability(V3, [
      [30, 2],
      [32, 2],
    ]);
    const gpuA = reachProbability(V3, [[30, 2]]);
    const gpuB = reachProbability(V3, [[32, 2]]);
    expect(split).toBeGreaterThan(Math.max(gpuA, gpuB));
    expect(split).toBeLessThan(gpuA + gpuB);
  });

  it('refuses groups that do not divide the experts, or too few experts for top-k', () => {
    expect(routingProblem({ experts: 256, topK: 8, groups: 3, groupsPerToken: 1 })).toMatch(/must divide the 256/);
    expect(routingProblem({ experts: 16, topK: 8, groups: 8, groupsPerToken: 2 })).toMatch(/top-8 needs at least 8/);
    expect(routingProblem({ experts: 256, topK: 8, groups: 8, groupsPerToken: 9 })).toMatch(/between 1 and the 8/);
    expect(routingProblem(V3)).toBeUndefined();
  });
});
