import { describe, expect, it } from 'vitest';
import { candidateChanges } from '../../src/advise/alternatives.js';
import { simulateStep } from '../../src/sim/simulateStep.js';
import { scenarioOf } from '../helpers/scenario.js';
import { fineMoeModel } from '../helpers/models.js';

// Combined 1F1B (parallel.moeOverlap) is offered where it runs: without a pipeline, or over an interleaved one (as
// Megatron asks for a virtual pipeline); never over plain 1F1B, which the scenario checks refuse.

const offered = (parallel: Record<string, unknown>) => {
  const s = scenarioOf({
    name: 'moe-advice',
    cluster: { preset: 'hgx-h800', nodes: 2 },
    model: fineMoeModel(4),
    training: { globalBatch: 32, microBatch: 1, seqLen: 2048 },
    parallel,
  });
  return candidateChanges(s, simulateStep(s).result).some((c) => c.sets.includes('parallel.moeOverlap=true'));
};

describe('combined 1F1B in what to try', () => {
  it('is offered without a pipeline and over an interleaved pipeline', () => {
    expect(offered({ ep: 16 })).toBe(true);
    expect(offered({ pp: 2, ep: 8, schedule: 'interleaved', virtualStages: 2 })).toBe(true);
  });
  it('is not offered over plain 1F1B, nor where it already runs', () => {
    expect(offered({ pp: 2, ep: 8, schedule: '1f1b' })).toBe(false);
    expect(offered({ ep: 16, moeOverlap: true })).toBe(false);
  });
});
