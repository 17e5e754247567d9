import { describe, expect, it } from 'vitest';
import { knobContext, tpCommOverlapOf } from '../../src/plan/candidates.js';
import { defaultSpace } from '../../src/plan/space.js';
import { scenarioOf } from '../helpers/scenario.js';

/** One node of `preset` training a small Llama at tp 2 with sequence parallelism. */
const on = (preset: string) =>
  scenarioOf({
    cluster: { preset, nodes: 1 },
    model: { preset: 'llama2-7b', layers: 4, seqLen: 2048 },
    training: { globalBatch: 16, microBatch: 1 },
    parallel: { tp: 2, sequenceParallel: true, zero: 1 },
  });

describe("the planner's TP communication overlap", () => {
  it("is searched where Transformer Engine's userbuffers run (B200), not on AMD GPUs (ROCm's TE has none)", () => {
    const layout = { tp: 2, pp: 1, dp: 4, cp: 1 } as Parameters<typeof tpCommOverlapOf>[1];
    const searched = (preset: string) => {
      const s = on(preset);
      return tpCommOverlapOf({ ...defaultSpace(s), tpCommOverlap: [false, true] }, layout, true, knobContext(s));
    };
    expect(searched('hgx-b200')).toContain(true);
    expect(searched('mi300x-8gpu')).toEqual([false]);
  });
});
