import { describe, expect, it } from 'vitest';
import { evenSplitProblem, splitLayers } from '../../../src/sim/parallel/layout.js';

/** Layers of each pipeline stage: the union of its chunks (virtual stages c·pp + s). */
function perStage(chunks: number[][], pp: number): number[] {
  const out = new Array<number>(pp).fill(0);
  chunks.forEach((layers, virtual) => (out[virtual % pp] += layers.length));
  return out;
}

describe('splitLayers', () => {
  it('splits evenly over pp × v chunks, layers in order of the virtual stage', () => {
    const chunks = splitLayers(24, 4, 2);
    expect(chunks.map((c) => c.length)).toEqual(new Array(8).fill(3));
    expect(chunks.flat()).toEqual(Array.from({ length: 24 }, (_, i) => i));
  });

  it('takes an uneven split per stage with one chunk each', () => {
    const chunks = splitLayers(10, 3, 1, [2, 5, 3]);
    expect(chunks).toEqual([
      [0, 1],
      [2, 3, 4, 5, 6],
      [7, 8, 9],
    ]);
  });

  it('deals an uneven split over interleaved chunks: Llama 3 405B, 126 layers on 16 stages of 2 chunks', () => {
    const perStageCounts = [7, ...new Array(14).fill(8), 7];
    const chunks = splitLayers(126, 16, 2, perStageCounts);
    expect(chunks).toHaveLength(32);
    expect(perStage(chunks, 16)).toEqual(perStageCounts);
    // Stage 0 holds 7 layers as chunks of 4 and 3 (the first chunk takes the remainder).
    expect(chunks[0]).toHaveLength(4);
    expect(chunks[16]).toHaveLength(3);
    expect(chunks[15]).toHaveLength(4);
    expect(chunks[31]).toHaveLength(3);
    // Every layer once, in order over the virtual stages, each chunk non-empty.
    expect(chunks.flat()).toEqual(Array.from({ length: 126 }, (_, i) => i));
    expect(Math.min(...chunks.map((c) => c.length))).toBeGreaterThan(0);
  });

  it('refuses counts that do not add up, the wrong number of stages, or a stage with fewer layers than chunks', () => {
    expect(() => splitLayers(10, 2, 1, [4, 5])).toThrow(/adds up to 9, but the model has 10 layers/);
    expect(() => splitLayers(10, 2, 1, [10])).toThrow(/needs one count per pipeline stage \(2\), got 1/);
    expect(() => splitLayers(8, 2, 3, [2, 6])).toThrow(/stage 0 has 2 layers, fewer than its 3 model chunks/);
  });

  it(
    'counts the embedding and the loss as a layer each: ' +
      'Llama 3 405B, 126 layers on 16 stages of 8 one-layer chunks',
    () => {
      // (126 + 2) / (16 × 8) = 1 per chunk; the first chunk of stage 0 keeps the embedding alone, the last of stage 15
      // the loss alone, so those stages hold 7 layers and the others 8 (Llama Team 2024, §3.3.2).
      const chunks = splitLayers(126, 16, 8, undefined, { embedding: true, loss: true });
      expect(chunks).toHaveLength(128);
      expect(chunks[0]).toEqual([]);
      expect(chunks[127]).toEqual([]);
      expect(chunks.slice(1, 127).every((c) => c.length === 1)).toBe(true);
      expect(perStage(chunks, 16)).toEqual([7, ...new Array(14).fill(8), 7]);
      expect(chunks.flat()).toEqual(Array.from({ length: 126 }, (_, i) => i));
      // One slot alone: 31 layers + the embedding over 4 stages: 7 on the first, 8 on the others.
      expect(perStage(splitLayers(31, 4, 1, undefined, { embedding: true }), 4)).toEqual([7, 8, 8, 8]);
    },
  );

  it('refuses an even split whose layers and counted slots do not divide the chunks, saying what it counted', () => {
    expect(() => splitLayers(126, 16, 2, undefined, { embedding: true })).toThrow(
      /126 layers \+ 1 \(embedding counted as layers\) do not split evenly over pp × virtualStages = 16 × 2 = 32/,
    );
    expect(evenSplitProblem(126, 16, 8, { embedding: true, loss: true })).toBeUndefined();
    expect(evenSplitProblem(128, 16, 8)).toBeUndefined();
  });
});
