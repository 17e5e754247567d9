import { describe, expect, it } from 'vitest';
import { scenarioFromFile } from '../../src/cli/scenarioInput.js';
import { planLayouts } from '../../src/plan/layouts.js';
import { defaultSpace, type PlanSpace } from '../../src/plan/space.js';

// Llama-2-7B (32 layers), global batch 8 for the counts below.
const s = scenarioFromFile('scenarios/llama2-7b-zero3-nvlink.yaml', [
  'training.globalBatch=8',
  'training.microBatch=1',
]);
const small = (over: Partial<PlanSpace>): PlanSpace => ({
  ...defaultSpace(s),
  tp: [1, 2],
  cp: [1],
  pp: [1, 2, 4],
  microBatch: [1, 2],
  schedule: ['1f1b'],
  ...over,
});

describe('plan layouts', () => {
  it('lists every tiling of the GPUs whose batch divides, and counts those whose batch does not', () => {
    // (tp, pp, dp) on 8 GPUs: (1,1,8) (1,2,4) (1,4,2) (2,1,4) (2,2,2) (2,4,1), each with micro-batch 1 and 2: 12;
    // dp 8 with micro-batch 2 needs 16 sequences of the 8.
    const { layouts, removed } = planLayouts(s, small({}), 8);
    expect(layouts).toHaveLength(11);
    expect(removed.get('batch does not divide')).toBe(1);
    for (const l of layouts) {
      expect(l.tp * l.cp * l.pp * l.dp).toBe(8);
      expect(l.microBatches * l.microBatch * l.dp).toBe(8);
    }
  });

  it('adds the interleaved schedule where the micro-batches come in whole rounds of pp', () => {
    const { layouts, removed } = planLayouts(s, small({ schedule: ['1f1b', 'interleaved'], virtualStages: [2] }), 8);
    const interleaved = layouts.filter((l) => l.schedule === 'interleaved');
    // Pipelines: (pp 2, dp 4): m = 2 (mb 1), 1 (mb 2); (pp 4, dp 2): 4, 2; (pp 2, dp 2): 4, 2; (pp 4, dp 1): 8, 4.
    // Whole rounds (m divisible by pp): pp 2 dp 4 mb 1; pp 4 dp 2 mb 1; pp 2 dp 2 mb 1 and
    // mb 2; pp 4 dp 1 mb 1 and mb 2.
    expect(interleaved.map((l) => `${l.pp}/${l.dp}/${l.microBatch}`).sort()).toEqual([
      '2/2/1',
      '2/2/2',
      '2/4/1',
      '4/1/1',
      '4/1/2',
      '4/2/1',
    ]);
    expect(removed.get('interleaving needs micro-batches in whole rounds')).toBe(2);
  });

  it(
    'counts the embedding and the loss as layers where the ' +
      'layers alone do not split (126 layers over 16 × 8 chunks)',
    () => {
      const l405 = { ...s, model: { ...s.model, layers: 126 }, training: { ...s.training, globalBatch: 16 } };
      const { layouts } = planLayouts(
        l405,
        { ...small({ tp: [1], pp: [16], microBatch: [1], schedule: ['interleaved'], virtualStages: [8] }) },
        16,
      );
      expect(layouts).toEqual([expect.objectContaining({ pp: 16, virtualStages: 8, countEmbeddingAndLoss: true })]);
      // 126 layers split evenly over 2 stages of 63: no counting needed; over 4, only with the two counted (128 / 4);
      // over 5 neither way (126 and 128 are not multiples of 5).
      const even = planLayouts(l405, small({ tp: [1], pp: [2, 4], microBatch: [1] }), 16);
      expect(even.layouts.map((l) => [l.pp, l.countEmbeddingAndLoss])).toEqual([
        [2, false],
        [4, true],
      ]);
      const none = planLayouts(l405, small({ tp: [1], pp: [5], microBatch: [1] }), 10);
      expect(none.layouts).toEqual([]);
      expect(none.removed.get('layers do not split')).toBe(1);
    },
  );
});

describe('plan layouts of a model with experts', () => {
  const moe = scenarioFromFile('scenarios/mixtral-8x7b-ep8-64xh100.yaml', []);
  it('search expert parallelism: every power of 2 that divides the 8 experts and folds into the stage', () => {
    expect(defaultSpace(moe).ep).toEqual([1, 2, 4, 8]);
    expect(defaultSpace(s).ep).toBeUndefined();
    const space: PlanSpace = {
      ...defaultSpace(moe),
      tp: [2],
      cp: [1],
      pp: [4, 16],
      microBatch: [1],
      schedule: ['1f1b'],
    };
    const { layouts, removed } = planLayouts(moe, space, 64);
    // pp 4: dp 8, stage 16 ranks, etp = tp 2: ep 1, 2, 4, 8 all fold (2·8 = 16). pp 16: dp 2, stage 4 ranks: ep 1, 2.
    const eps = (pp: number) => layouts.filter((l) => l.pp === pp).map((l) => l.ep);
    expect(eps(4)).toEqual([1, 2, 4, 8]);
    expect(eps(16)).toEqual([1, 2]);
    expect(removed.get('experts do not fold into the stage')).toBe(2);
  });

  it('search DeepEP beside the all-to-all only when asked, and only where it runs (ep > 1, whole experts)', () => {
    expect(defaultSpace(moe).dispatcher).toEqual(['alltoall']);
    expect(defaultSpace(s).dispatcher).toBeUndefined();
    const space: PlanSpace = {
      ...defaultSpace(moe),
      tp: [1, 2],
      cp: [1],
      pp: [4],
      microBatch: [1],
      schedule: ['1f1b'],
      dispatcher: ['alltoall', 'deepep'],
    };
    const { layouts } = planLayouts(moe, space, 64);
    const of = (tp: number, ep: number) =>
      layouts.filter((l) => l.tp === tp && l.ep === ep).map((l) => l.dispatcher ?? 'alltoall');
    // tp 1 (the experts' tp too): DeepEP beside the all-to-all for every ep above 1; at ep 1 nothing to dispatch.
    expect(of(1, 8)).toEqual(['alltoall', 'deepep']);
    expect(of(1, 1)).toEqual(['alltoall']);
    // tp 2: each expert split over 2 ranks, which DeepEP is not modelled with.
    expect(of(2, 8)).toEqual(['alltoall']);
  });

  it('search combined 1F1B where it runs: experts spread over ranks, two micro-batches, no pipeline or VPP', () => {
    expect(defaultSpace(moe).moeOverlap).toEqual([false]);
    const space: PlanSpace = {
      ...defaultSpace(moe),
      tp: [2],
      cp: [1],
      pp: [1, 4],
      microBatch: [1],
      schedule: ['1f1b', 'interleaved'],
      virtualStages: [2],
      moeOverlap: [false, true],
    };
    const { layouts } = planLayouts(moe, space, 64);
    const of = (pp: number, ep: number, schedule = '1f1b') =>
      layouts.filter((l) => l.pp === pp && l.ep === ep && l.schedule === schedule).map((l) => l.moeOverlap === true);
    expect(of(1, 8)).toEqual([false, true]);
    expect(of(1, 1)).toEqual([false]);
    expect(of(4, 8)).toEqual([false]);
    expect(of(4, 8, 'interleaved')).toEqual([false, true]);
  });

  it('leave ep out of a dense model’s layouts', () => {
    expect(planLayouts(s, small({}), 8).layouts.every((l) => l.ep === undefined)).toBe(true);
  });
});
