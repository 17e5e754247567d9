import { describe, expect, it } from 'vitest';
import { simulateStep } from '../../../src/sim/simulateStep.js';
import { scenarioOf } from '../../helpers/scenario.js';
import { deepspeedGatherGroups, deepspeedReduceBuckets } from '../../../src/sim/parallel/zero3Collectives.js';

/**
 * GPT-3 175B's layer: its parameters' elements in the order backward makes the gradients (fc2 weight and bias, fc1
 * weight and bias, the second norm, the attention output, QKV, the first norm).
 */
const h = 12288;
const GPT3_LAYER_BACKWARD = [4 * h * h, h, 4 * h * h, 4 * h, h, h, h * h, h, 3 * h * h, 3 * h, h, h];

describe("DeepSpeed ZeRO-3's collectives (v0.6.2)", () => {
  it('gathers every parameter over the 5e7-element prefetch bucket on its own, and none under 1e5 (persistent)', () => {
    // fc1 and fc2 weights (604M), the attention output (151M) and QKV (453M) each pass the bucket alone; the biases
    // and layer norms are persistent.
    const forward = [...GPT3_LAYER_BACKWARD].reverse();
    expect(deepspeedGatherGroups(forward)).toEqual([3 * h * h, h * h, 4 * h * h, 4 * h * h]);
  });

  it('coalesces small parameters until a group holds at least the bucket', () => {
    expect(deepspeedGatherGroups([2e7, 2e7, 2e7, 2e7, 5e4])).toEqual([6e7, 2e7]);
    expect(deepspeedGatherGroups([5e4, 9e4])).toEqual([]);
  });

  it('reduce-scatters a bucket before a gradient would pass reduce_bucket_size, so a large one goes alone', () => {
    // Each large gradient flushes the bucket before it and fills one of its own (the recipe's 9e7 elements).
    expect(deepspeedReduceBuckets([10, 20, 100, 5, 5], 50)).toEqual([30, 100, 10]);
    const buckets = deepspeedReduceBuckets(GPT3_LAYER_BACKWARD, 9e7);
    expect(buckets.reduce((a, n) => a + n, 0)).toBe(GPT3_LAYER_BACKWARD.reduce((a, n) => a + n, 0));
    for (const n of [4 * h * h, h * h, 3 * h * h]) expect(buckets).toContain(n);
  });

  it(
    'puts that many collectives in the step: ' +
      "one a wrapped block with FSDP's, one a parameter group with DeepSpeed's",
    () => {
      const run = (stage3: 'deepspeed' | 'fsdp') =>
        simulateStep(
          scenarioOf({
            cluster: { preset: 'dgx-a100-80gb', nodes: 2 },
            model: {
              arch: 'gpt',
              layers: 2,
              hidden: h,
              heads: 96,
              ffnHidden: 4 * h,
              seqLen: 512,
              vocab: 50304,
              tiedEmbeddings: true,
            },
            training: { globalBatch: 16, microBatch: 1, precision: 'fp16', flashAttention: false },
            parallel: {
              tp: 1,
              pp: 1,
              dp: 16,
              zero: 3,
              recompute: 'full',
              zeroConfig: { stage3, reduceBucketMB: (9e7 * 2) / 2 ** 20 },
            },
          }),
        ).plan.program.tasks;
      const layerGathers = (tasks: ReturnType<typeof run>) =>
        tasks.filter((t) => t.kind === 'zero-gather' && /layer/.test(t.label) && /mb0$/.test(t.label));
      // Two layers, gathered before forward and before backward: FSDP 2 × 2; DeepSpeed 4 parameters each time.
      expect(layerGathers(run('fsdp'))).toHaveLength(4);
      expect(layerGathers(run('deepspeed'))).toHaveLength(16);
      const bytes = (tasks: ReturnType<typeof run>) => layerGathers(tasks).reduce((a, t) => a + t.collective!.bytes, 0);
      // The same weights move either way, less DeepSpeed's persistent biases and norms (never gathered).
      expect(bytes(run('deepspeed'))).toBe(4 * 2 * 12 * h * h);
      expect(bytes(run('fsdp')) - bytes(run('deepspeed'))).toBe(4 * 2 * 13 * h);
    },
  );
});
