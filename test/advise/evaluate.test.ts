import { describe, expect, it } from 'vitest';
import { evaluateAlternatives, evaluateAlternativesThreaded } from '../../src/advise/evaluate.js';

const gpt = { arch: 'gpt', layers: 4, hidden: 1024, heads: 16, ffnHidden: 4096, seqLen: 1024, vocab: 51200, tiedEmbeddings: true };
const raw = { name: 'b', cluster: { preset: 'dgx-a100-80gb', nodes: 1 }, model: gpt, training: { globalBatch: 16, microBatch: 2, precision: 'bf16' }, parallel: { dp: 8 } };
const list = [
  { label: 'tp 3', sets: ['parallel.tp=3'] }, // 16 heads over 3 ranks
  { label: 'mb 4', sets: ['training.microBatch=4'] }, // 2 samples per replica
  { label: 'mb 1', sets: ['training.microBatch=1'] },
  { label: 'zero 1', sets: ['parallel.zero=1'] },
  { label: 'tp 5', sets: ['parallel.tp=5'] },
  { label: 'zero 2', sets: ['parallel.zero=2'] },
];

describe('alternatives side by side', () => {
  it('simulates the candidates the one-by-one loop reaches, in batches of what is still missing, with the same result', async () => {
    for (const limit of [1, 2, 3, 6]) {
      const started: string[] = [];
      const serial: string[] = [];
      const one = evaluateAlternatives(raw, [], 'test', process.cwd(), list, limit, (l) => serial.push(l));
      const side = await evaluateAlternativesThreaded({ raw, baseSets: [], source: 'test', baseDir: process.cwd(), candidates: list }, limit, { jobs: 3, onStart: (l) => started.push(l) });
      expect(side).toEqual(one);
      // The same candidates were tried: none past the one at which the loop had enough.
      expect(started).toEqual(serial);
    }
    // Candidates that cannot be built do not count towards the limit; the loop stops at it.
    expect(evaluateAlternatives(raw, [], 'test', process.cwd(), list, 1).map((a) => a.label)).toEqual(['mb 1']);
    expect(evaluateAlternatives(raw, [], 'test', process.cwd(), list, 2).map((a) => a.label)).toEqual(['mb 1', 'zero 1']);
    const three = evaluateAlternatives(raw, [], 'test', process.cwd(), list, 3);
    expect(three.map((a) => a.label)).toEqual(['mb 1', 'zero 1', 'zero 2']);
    expect(three.every((a) => a.stepTimeS! > 0)).toBe(true);
  });

  it('applies the user overrides under every candidate', async () => {
    const job = { raw, baseSets: ['training.globalBatch=32'], source: 'test', baseDir: process.cwd(), candidates: [list[3]] };
    const [bigger] = await evaluateAlternativesThreaded(job, 1, { jobs: 1 });
    const [plain] = await evaluateAlternativesThreaded({ ...job, baseSets: [] }, 1, { jobs: 1 });
    expect(bigger.stepTimeS!).toBeGreaterThan(1.5 * plain.stepTimeS!);
  });
});
