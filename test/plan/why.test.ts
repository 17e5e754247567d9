import { describe, expect, it } from 'vitest';
import { partDifferences, whyClause } from '../../src/plan/why.js';
import type { Simulated } from '../../src/plan/evaluate.js';
import { tokensText } from '../../src/cli/planOutput.js';
import { parseTokens } from '../../src/cli/planOptions.js';

const sim = (computeS: number, exposedCommS: number, bubbleS: number): Simulated => ({
  stepTimeS: computeS + exposedCommS + bubbleS,
  tokensPerS: 1,
  mfu: 0.5,
  peakBytesPerGpu: 1,
  capacityBytes: 2,
  fits: true,
  breakdown: { computeS, exposedCommS, bubbleS, hostOptimizerS: 0, idleS: 0, commS: exposedCommS },
  bound: 'compute',
  kind: { gpu: 'ampere', style: 'pipeline', scale: 'one-node', host: 'kernels-only' },
});

describe('why a plan winner wins', () => {
  it('names the parts it saves most on, largest first, and what it pays more for', () => {
    const winner = sim(10, 1, 0.5);
    const other = sim(9.5, 2, 1.5);
    expect(partDifferences(winner, other)).toEqual([
      { part: 'exposed communication', savedS: 1 },
      { part: 'pipeline bubble', savedS: 1 },
      { part: 'compute', savedS: -0.5 },
    ]);
    expect(whyClause(winner, other, (s) => `${s.toFixed(1)} s`)).toBe(
      '1.0 s less exposed communication and 1.0 s less pipeline bubble, for 0.5 s more compute',
    );
  });

  it('leaves out a cost under 1% of the step', () => {
    expect(whyClause(sim(10, 1, 0), sim(9.95, 2, 0), (s) => `${s.toFixed(2)} s`)).toBe(
      '1.00 s less exposed communication',
    );
  });
});

describe('token counts', () => {
  it('reads 2T, 300B, 1.5e12 and writes them back', () => {
    expect(parseTokens('2T')).toBe(2e12);
    expect(parseTokens('300b')).toBe(3e11);
    expect(parseTokens('1.5e12')).toBe(1.5e12);
    expect(tokensText(2e12)).toBe('2T');
    expect(tokensText(3e11)).toBe('300B');
    expect(tokensText(1.5e6)).toBe('1.5M');
    expect(() => parseTokens('0')).toThrow(/not a token count/);
  });
});

describe('the command that reproduces a plan', () => {
  it('quotes the words a shell would split or expand, and reads back as they were', async () => {
    const { shellQuote } = await import('../../src/cli/planCommand.js');
    const { shellWords } = await import('../../src/scenario/importShellWords.js');
    const words = [
      'clustersim',
      'parallel.tp=8',
      '--tensor-model-parallel-size 8 --bf16',
      "it's",
      'a b/c.yaml',
      '$HOME',
    ];
    expect(words.map(shellQuote).slice(0, 2)).toEqual(['clustersim', 'parallel.tp=8']);
    expect(shellWords(words.map(shellQuote).join(' '), 'test').words).toEqual(words);
  });
});

describe('the caution when the error bands reorder the best', () => {
  const band = (medianPct: number) => ({
    rows: 10,
    matched: ['gpu' as const],
    sets: ['s'],
    edges: 'p10-p90' as const,
    lowPct: medianPct - 5,
    medianPct,
    highPct: medianPct + 5,
  });
  const row = (stepS: number, medianPct: number) => ({
    candidate: {} as never,
    sets: [],
    changed: [],
    estimateS: stepS,
    sim: sim(stepS, 0, 0),
    band: band(medianPct),
    tie: false,
    own: false,
  });

  it('names the row that the bands’ medians would put first, with both corrected times', async () => {
    const { biasLines } = await import('../../src/cli/planOutput.js');
    // #1 10 s with +30% (13 s), #2 11 s with 0% (11 s), #3 12 s with -10% (10.8 s): #3 is the one named.
    const lines = biasLines([row(10, 30), row(11, 0), row(12, -10)]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('like #1 measured a median +30%');
    expect(lines[0]).toContain('like #3 -10%');
    expect(lines[0]).toContain('(10.800 s against 13.000 s)');
    expect(biasLines([row(10, 0), row(11, 5)])).toEqual([]);
  });
});
