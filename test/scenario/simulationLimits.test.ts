import { describe, expect, it } from 'vitest';
import { scenarioOf } from '../helpers/scenario.js';
import { InvalidScenarioError } from '../../src/scenario/errors.js';
import { MAX_GPUS, MAX_LAYER_PASSES, MAX_MICRO_BATCHES_PER_STEP } from '../../src/scenario/simulationLimits.js';
import { cli } from '../helpers/cli.js';

function problemsOf(raw: Record<string, unknown>) {
  try {
    scenarioOf(raw);
  } catch (err) {
    if (err instanceof InvalidScenarioError) return err.problems;
    throw err;
  }
  return [];
}

const base = (nodes: number, globalBatch: number) => ({
  name: 'big',
  cluster: { preset: 'dgx-a100-80gb', nodes },
  model: { preset: 'bert-large' },
  training: { globalBatch, microBatch: 1 },
});

describe('inputs too large to simulate are refused before anything runs', () => {
  it(
    'more micro-batches per replica than the limit: ' +
      'a problem at training.globalBatch naming the count and what to change',
    () => {
      // 8 GPUs, dp 8: a global batch of 8 × (limit + 1) makes limit + 1 micro-batches per replica.
      const over = problemsOf(base(1, 8 * (MAX_MICRO_BATCHES_PER_STEP + 1)));
      expect(over).toEqual([
        {
          path: 'training.globalBatch',
          message: expect.stringMatching(
            /^makes 10,001 micro-batches per step on each replica .*Raise training\.microBatch/,
          ),
        },
      ]);
      expect(problemsOf(base(1, 8 * MAX_MICRO_BATCHES_PER_STEP))).toEqual([]);
    },
  );

  it('more layer passes (layers × micro-batches) than the limit: a problem at model.layers (issue 26, item 6)', () => {
    const deep = (layers: number, globalBatch: number) => ({
      ...base(1, globalBatch),
      model: { arch: 'llama', layers, hidden: 256, heads: 4, ffnHidden: 512, seqLen: 256, vocab: 1000 },
    });
    // dp 8: 8 × m sequences make m micro-batches per replica.
    expect(problemsOf(deep(100_000, 8 * 8))).toEqual([
      {
        path: 'model.layers',
        message: expect.stringMatching(
          /^100,000 layers × 8 micro-batches per replica = 800,000 layer passes, more than the 400,000/,
        ),
      },
    ]);
    expect(problemsOf(deep(MAX_LAYER_PASSES / 4, 8 * 4))).toEqual([]);
    // A 32-layer model keeps the whole micro-batch limit.
    expect(32 * MAX_MICRO_BATCHES_PER_STEP).toBeLessThanOrEqual(MAX_LAYER_PASSES);
  });

  it('more GPUs than the limit: a problem at cluster.nodes', () => {
    const nodes = MAX_GPUS / 8 + 1;
    expect(problemsOf(base(nodes, 8 * nodes))).toEqual([
      {
        path: 'cluster.nodes',
        message: expect.stringMatching(/^262,152 GPUs is more than the 262,144 the simulator takes/),
      },
    ]);
    expect(problemsOf(base(MAX_GPUS / 8, MAX_GPUS))).toEqual([]);
  });

  it('more GPUs than the limit with a dp that no longer matches: only the limit, not a dp to match the cluster', () => {
    const nodes = MAX_GPUS / 8 + 1;
    expect(problemsOf({ ...base(nodes, 16), parallel: { dp: 16 } })).toEqual([
      { path: 'cluster.nodes', message: expect.stringMatching(/^262,152 GPUs is more than/) },
    ]);
    // Within the limit the mismatch is still reported, with the dp that would match.
    expect(problemsOf({ ...base(4, 16), parallel: { dp: 16 } })).toEqual([
      { path: 'parallel.dp', message: expect.stringMatching(/set dp to 32 or leave it out$/) },
    ]);
  });

  it('simulate exits 2 at once with the message, no crash, for an absurd batch', async () => {
    const r = await cli('simulate', 'scenarios/bert-large-ddp-2node.yaml', '--set', 'training.globalBatch=1e12');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/training\.globalBatch: makes [\d,]+ micro-batches per step on each replica/);
    expect(r.err).not.toMatch(/at .*\.js:\d+/);
  });
});
