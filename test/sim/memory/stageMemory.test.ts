import { describe, expect, it } from 'vitest';
import { stageMemories } from '../../../src/sim/memory/stageMemory.js';
import { scenarioOf } from '../../helpers/scenario.js';

const gpt = { arch: 'gpt', layers: 8, hidden: 4096, heads: 32, ffnHidden: 16384, seqLen: 2048, vocab: 51200 };
const stages = (tiedEmbeddings: boolean, pp: number) =>
  stageMemories(scenarioOf({ name: 't', cluster: { preset: 'dgx-a100-80gb', nodes: 1 }, model: { ...gpt, tiedEmbeddings }, training: { globalBatch: 16, microBatch: 1 }, parallel: { tp: 2, pp } }));

describe('parameters per pipeline stage', () => {
  it('with tied embeddings and a pipeline, the last stage holds its own copy of the word embeddings (Megatron), V·h / tp more', () => {
    const tied = stages(true, 2);
    const untied = stages(false, 2);
    // Untied: the last stage holds the LM head (V·h / tp) as a weight of its own; tied: the copy of the embedding, as many.
    expect(tied[1].paramsPerRank).toBe(untied[1].paramsPerRank);
    expect(tied[0].paramsPerRank).toBe(untied[0].paramsPerRank);
    // Without a pipeline one tensor serves both ends: tied holds V·h / tp fewer than untied.
    const [one] = stages(true, 1);
    const [oneUntied] = stages(false, 1);
    expect(oneUntied.paramsPerRank - one.paramsPerRank).toBe((51200 * 4096) / 2);
  });
});
