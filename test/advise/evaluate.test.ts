import { describe, expect, it } from 'vitest';
import { evaluateAlternatives, evaluateCandidate, type AlternativesJob } from '../../src/advise/evaluate.js';
import type { Alternative } from '../../src/advise/alternatives.js';

const gpt = {
  arch: 'gpt',
  layers: 4,
  hidden: 1024,
  heads: 16,
  ffnHidden: 4096,
  seqLen: 1024,
  vocab: 51200,
  tiedEmbeddings: true,
};
const raw = {
  name: 'b',
  cluster: { preset: 'dgx-a100-80gb', nodes: 1 },
  model: gpt,
  training: { globalBatch: 16, microBatch: 2, precision: 'bf16' },
  parallel: { dp: 8 },
};
const list = [
  { label: 'tp 3', sets: ['parallel.tp=3'] }, // 16 heads over 3 ranks
  { label: 'mb 4', sets: ['training.microBatch=4'] }, // 2 samples per replica
  { label: 'mb 1', sets: ['training.microBatch=1'] },
  { label: 'zero 1', sets: ['parallel.zero=1'] },
  { label: 'tp 5', sets: ['parallel.tp=5'] },
  { label: 'zero 2', sets: ['parallel.zero=2'] },
];

const job: AlternativesJob = { raw, baseSets: [], source: 'test', baseDir: process.cwd(), candidates: list };

/** The rule itself: candidates one after another until `limit` could be simulated. */
function oneByOne(limit: number, onStart: (label: string) => void): Alternative[] {
  const out: Alternative[] = [];
  for (let i = 0; i < list.length && out.length < limit; i++) {
    onStart(list[i].label);
    const a = evaluateCandidate(job, i);
    if (a.stepTimeS !== undefined) out.push(a);
  }
  return out;
}

describe('alternatives side by side', () => {
  it(
    'simulates the candidates the one-by-one loop reaches, ' +
      'in batches of what is still missing, with the same result',
    async () => {
      for (const limit of [1, 2, 3, 6]) {
        const started: string[] = [];
        const serial: string[] = [];
        const one = oneByOne(limit, (l) => serial.push(l));
        const side = await evaluateAlternatives(job, limit, { jobs: 3, onStart: (l) => started.push(l) });
        expect(side).toEqual(one);
        // The same candidates were tried: none past the one at which the loop had enough.
        expect(started).toEqual(serial);
      }
      // Candidates that cannot be built do not count towards the limit; the loop stops at it.
      expect((await evaluateAlternatives(job, 1, { jobs: 1 })).map((a) => a.label)).toEqual(['mb 1']);
      expect((await evaluateAlternatives(job, 2, { jobs: 1 })).map((a) => a.label)).toEqual(['mb 1', 'zero 1']);
      const three = await evaluateAlternatives(job, 3, { jobs: 1 });
      expect(three.map((a) => a.label)).toEqual(['mb 1', 'zero 1', 'zero 2']);
      expect(three.every((a) => a.stepTimeS! > 0)).toBe(true);
    },
  );

  it(
    'does not count the alternatives it is told to leave ' + 'out (those that would not fit where the setup fits)',
    async () => {
      const notZero1 = (a: Alternative) => a.label !== 'zero 1';
      const started: string[] = [];
      const two = await evaluateAlternatives(job, 2, { jobs: 3, keep: notZero1, onStart: (l) => started.push(l) });
      expect(two.map((a) => a.label)).toEqual(['mb 1', 'zero 2']);
      // It went on to the next candidate in its place, and no further.
      expect(started).toEqual(['tp 3', 'mb 4', 'mb 1', 'zero 1', 'tp 5', 'zero 2']);
    },
  );

  it('applies the user overrides under every candidate', async () => {
    const one = { ...job, baseSets: ['training.globalBatch=32'], candidates: [list[3]] };
    const [bigger] = await evaluateAlternatives(one, 1, { jobs: 1 });
    const [plain] = await evaluateAlternatives({ ...one, baseSets: [] }, 1, { jobs: 1 });
    expect(bigger.stepTimeS!).toBeGreaterThan(1.5 * plain.stepTimeS!);
  });
});
