import { describe, expect, it } from 'vitest';
import { expertLoad, expertShares } from '../../../src/sim/workload/routing.js';
import type { MoeSpec } from '../../../src/sim/workload/moe.js';
import { simulateStep } from '../../../src/sim/simulateStep.js';
import { scenarioOf } from '../../helpers/scenario.js';

const MOE8: MoeSpec = { experts: 8, topK: 2, expertFfnHidden: 2048, sharedExpertFfnHidden: 0, denseLayers: 0 };

describe('routing loads', () => {
  it('are balanced without a skew: every expert 1/E, the busiest rank exactly its share', () => {
    expect(expertShares(MOE8, { skew: 0 }, 1, 0)).toEqual(new Array(8).fill(1 / 8));
    expect(expertLoad(MOE8, 8, { skew: 0 }, 1, 0)).toEqual({ busiestFactor: 1, droppedShare: 0 });
  });

  it('follow a measured histogram: counts 3,1,1,1,1,1,1,1 over ep 4 put 4/10 of the pairs on rank 0', () => {
    const load = expertLoad(MOE8, 4, { skew: 0, tokensPerExpert: [3, 1, 1, 1, 1, 1, 1, 1] }, 1, 0);
    // Rank 0 holds experts 0 and 1: (3 + 1) / 10 of the pairs against a balanced 1/4.
    expect(load.busiestFactor).toBeCloseTo((4 / 10) * 4, 12);
    expect(load.droppedShare).toBe(0);
  });

  it('drop what exceeds the capacity, and pad every expert to it when asked', () => {
    const routing = { skew: 0, tokensPerExpert: [3, 1, 1, 1, 1, 1, 1, 1], capacityFactor: 1 };
    // Capacity 1/8 of the pairs an expert: expert 0 keeps 1/8 of its 3/10 and drops 3/10 − 1/8 = 0.175.
    const load = expertLoad(MOE8, 8, routing, 1, 0);
    expect(load.droppedShare).toBeCloseTo(3 / 10 - 1 / 8, 12);
    expect(load.busiestFactor).toBeCloseTo(1, 12);
    expect(
      expertLoad(MOE8, 8, { ...routing, capacityFactor: 1.5, padToCapacity: true }, 1, 0).busiestFactor,
    ).toBeCloseTo(1.5, 12);
  });

  it('never put less than a balanced share on the busiest rank, whatever the skew and seed', () => {
    for (const skew of [0.05, 0.3, 1, 2])
      for (const seed of [1, 2, 3])
        for (const ep of [1, 2, 8]) {
          const shares = expertShares(MOE8, { skew }, seed, 0);
          expect(shares.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
          expect(expertLoad(MOE8, ep, { skew }, seed, 0).busiestFactor).toBeGreaterThanOrEqual(1 - 1e-12);
        }
  });
});

describe('routing imbalance in a step', () => {
  const step = (routing?: Record<string, unknown>, seed = 1) =>
    simulateStep(
      scenarioOf({
        name: 'moe',
        seed,
        cluster: { preset: 'dgx-h100', nodes: 1 },
        model: {
          arch: 'llama',
          layers: 4,
          hidden: 1024,
          heads: 8,
          ffnHidden: 4096,
          seqLen: 2048,
          vocab: 32000,
          moe: { experts: 8, topK: 2, expertFfnHidden: 2048 },
        },
        training: { globalBatch: 16, seqLen: 2048, ...(routing ? { routing } : {}) },
        parallel: { ep: 8 },
      }),
    ).result.stepTimeS;

  it('never speeds a step up, and more skew never makes it faster than less on one draw', () => {
    for (const seed of [1, 2, 3]) {
      const balanced = step(undefined, seed);
      let previous = balanced;
      for (const skew of [0.1, 0.5, 1]) {
        const t = step({ skew }, seed);
        expect(t).toBeGreaterThanOrEqual(balanced);
        expect(t).toBeGreaterThanOrEqual(previous * (1 - 1e-9));
        previous = t;
      }
      // And it does slow it: the busiest expert's rank computes more, and every all-to-all waits for it.
      expect(previous).toBeGreaterThan(balanced);
    }
  });

  it('is the same step with a histogram of equal counts as with none', () => {
    expect(step({ tokensPerExpert: [5, 5, 5, 5, 5, 5, 5, 5] })).toBe(step());
  });
});
