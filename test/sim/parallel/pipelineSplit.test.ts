import { describe, expect, it } from 'vitest';
import { simulateStep } from '../../../src/sim/simulateStep.js';
import { scenarioOf } from '../../helpers/scenario.js';

/** A 6-layer GPT with a large vocabulary (so its embedding and loss weigh) on one node of 4 GPUs, one per stage. */
function gpt6(parallel: Record<string, unknown>) {
  return scenarioOf({
    cluster: { preset: 'dgx-a100-80gb', nodes: 1, node: { gpusPerNode: 4, nicsPerNode: 1 } },
    model: { arch: 'gpt', layers: 6, hidden: 2048, heads: 16, seqLen: 1024, vocab: 50304 },
    training: { globalBatch: 32, microBatch: 4 },
    parallel: { pp: 4, ...parallel },
  });
}

describe('a pipeline split that counts the embedding and the loss as layers', () => {
  it(
    'is the uneven split [1, 2, 2, 1] without interleaving: ' + 'the same step, to the nanosecond, and the same memory',
    () => {
      // (6 + 2) / 4 = 2 per stage: stage 0 the embedding and one layer, stage 3 one layer and the loss.
      const counted = simulateStep(gpt6({ accountForEmbeddingInSplit: true, accountForLossInSplit: true })).result;
      const given = simulateStep(gpt6({ layersPerStage: [1, 2, 2, 1] })).result;
      expect(counted.stepTimeS).toBe(given.stepTimeS);
      expect(counted.memory.perStage.map((s) => s.totalBytes)).toEqual(given.memory.perStage.map((s) => s.totalBytes));
    },
  );

  it(
    'runs chunks that hold only the embedding or only the loss, ' + 'doing the same compute as any split of the model',
    () => {
      // pp 4 × 2 chunks = 8 = 6 layers + 2: virtual stage 0 holds the embedding alone, virtual stage 7 the loss alone.
      const counted = simulateStep(
        gpt6({
          schedule: 'interleaved',
          virtualStages: 2,
          accountForEmbeddingInSplit: true,
          accountForLossInSplit: true,
        }),
      ).result;
      const even = simulateStep(gpt6({ layersPerStage: [1, 2, 2, 1] })).result;
      expect(Number.isFinite(counted.stepTimeS)).toBe(true);
      expect(counted.memory.perStage.map((s) => s.layers)).toEqual([1, 2, 2, 1]);
      // Compute is the same kernels on the same 4 GPUs however they are split: equal means over the GPUs.
      expect(counted.breakdown.computeS).toBeCloseTo(even.breakdown.computeS, 9);
    },
  );

  it('is refused with layersPerStage, on an MLP, and when the layers and slots do not divide the chunks', () => {
    expect(() => gpt6({ layersPerStage: [1, 2, 2, 1], accountForLossInSplit: true })).toThrow(
      /parallel.accountForLossInSplit: changes the even split only.*give one or the other/,
    );
    expect(() => gpt6({ accountForEmbeddingInSplit: true })).toThrow(
      new RegExp(
        /parallel.pp: 6 layers \+ 1 \(embedding counted as layers\) do not /.source +
          /split evenly over pp × virtualStages = 4 × 1 = 4 model chunks; /.source +
          /change pp or virtualStages, or drop parallel.accountForEmbeddingInSplit/.source,
      ),
    );
  });
});
