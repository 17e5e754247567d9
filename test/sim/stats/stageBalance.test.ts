import { describe, expect, it } from 'vitest';
import { balancedLayers } from '../../../src/sim/stats/stageBalance.js';
import {
  boundOf,
  bottleneckText,
  diagnose,
  stageImbalanceText,
  type StepShares,
} from '../../../src/sim/stats/bottleneck.js';
import { cli } from '../../helpers/badInput.js';

// Issue 26, item 14: the bottleneck line says what bounds the step, and a pipeline's unequal stages are named, with
// the split of layers that evens them.
describe('balancedLayers: the split that makes the slowest stage fastest', () => {
  it('gives an even split when the stages have no fixed work', () => {
    expect(balancedLayers([0, 0, 0, 0], 1, 32, 1)).toEqual([8, 8, 8, 8]);
  });

  it('takes layers off a stage whose fixed work is worth two layers, and gives them to the others', () => {
    // 32 layers of 1 s, the last stage 2 s of output layer and loss: 34 s of work over 4 stages, 8.5 s each at best,
    // so the slowest can be 9 s (at most 7 layers on the last); an even split leaves it at 10 s.
    const split = balancedLayers([0, 0, 0, 2], 1, 32, 1);
    expect(split.reduce((a, b) => a + b, 0)).toBe(32);
    expect(Math.max(...split.map((n, s) => n + [0, 0, 0, 2][s]))).toBe(9);
    expect(split[3]).toBeLessThanOrEqual(7);
  });

  it('keeps at least one layer per model chunk', () => {
    expect(balancedLayers([0, 0, 50], 1, 6, 2)).toEqual([2, 2, 2]);
  });
});

const shares = (over: Partial<StepShares>): StepShares => ({
  stepTimeS: 1,
  computeS: 0.76,
  exposedCommS: 0.2,
  bubbleS: 0,
  hostOptimizerS: 0,
  idleS: 0.04,
  fits: true,
  shortfallBytes: 0,
  capacityBytes: 1,
  ...over,
});

describe('the bottleneck line', () => {
  it('says compute bounds a step that is 76% compute, and names the largest loss as that', () => {
    const b = diagnose(shares({}), []);
    expect(b.bound).toBe('exposed communication');
    expect(bottleneckText(b)).toMatch(/^compute \(76\.0% of the step\); the largest loss is exposed communication — /);
  });

  it('gives a table column compute for that step, and the loss where compute is under half (boundOf)', () => {
    expect(boundOf(diagnose(shares({}), []))).toBe('compute');
    expect(boundOf(diagnose(shares({ computeS: 0.45, exposedCommS: 0.5 }), []))).toBe('exposed communication');
    expect(boundOf(diagnose(shares({ fits: false, shortfallBytes: 1, capacityBytes: 10 }), []))).toBe('memory');
  });

  it('names the loss as the bound when compute is under half the step', () => {
    const b = diagnose(shares({ computeS: 0.45, exposedCommS: 0.5 }), []);
    expect(bottleneckText(b)).toMatch(/^exposed communication — /);
  });

  it('says nothing of stage balance under 2% of the step, and the gap and the split above it', () => {
    const even = { computeS: [1, 1.01], layers: [4, 4], imbalanceShare: 0.005, layerS: 0.25 };
    expect(stageImbalanceText(even, 2)).toBeUndefined();
    const uneven = {
      computeS: [1, 1.5],
      layers: [4, 4],
      imbalanceShare: 0.125,
      layerS: 0.25,
      suggestedLayersPerStage: [5, 3],
    };
    expect(stageImbalanceText(uneven, 2)).toBe(
      '12.5% of the step: stage 1 computes for 75.0% of it with 4 layers, ' +
        'stage 0 for 50.0% with 4; parallel.layersPerStage=[5,3] evens them',
    );
  });
});

describe('unequal pipeline stages in a simulated step', () => {
  // Llama-3-8B's 128,256-token output layer is worth about two of its layers, all on the last of 4 stages.
  const sets = [
    '--set',
    'model.preset=llama3-8b',
    '--set',
    'parallel.tp=2',
    '--set',
    'parallel.pp=4',
    '--set',
    'training.globalBatch=64',
    '--set',
    'training.microBatch=1',
    '--set',
    'parallel.dp=null',
  ];

  it('finds the last stage slowest, offers a split, and the split simulates faster', async () => {
    const r = await cli('simulate', 'scenarios/llama2-13b-tp8-nvswitch.yaml', ...sets, '--json', '--alternatives', '0');
    expect(r.code, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout) as {
      stepTimeS: number;
      stageBalance: {
        computeS: number[];
        layers: number[];
        imbalanceShare: number;
        suggestedLayersPerStage?: number[];
      };
    };
    const b = j.stageBalance;
    expect(b.layers).toEqual([8, 8, 8, 8]);
    expect(b.computeS.indexOf(Math.max(...b.computeS))).toBe(3);
    // The forced idle is at most what the step leaves beyond the mean compute.
    expect(b.imbalanceShare).toBeGreaterThan(0.02);
    expect(b.imbalanceShare * j.stepTimeS).toBeLessThanOrEqual(
      j.stepTimeS - b.computeS.reduce((a, c) => a + c, 0) / 4 + 1e-9,
    );
    const split = b.suggestedLayersPerStage!;
    expect(split.reduce((a, c) => a + c, 0)).toBe(32);
    expect(split[3]).toBeLessThan(8);
    const again = await cli(
      'simulate',
      'scenarios/llama2-13b-tp8-nvswitch.yaml',
      ...sets,
      '--set',
      `parallel.layersPerStage=[${split.join(',')}]`,
      '--json',
      '--alternatives',
      '0',
    );
    const after = JSON.parse(again.stdout) as { stepTimeS: number; stageBalance: { imbalanceShare: number } };
    expect(after.stepTimeS).toBeLessThan(j.stepTimeS);
    expect(after.stageBalance.imbalanceShare).toBeLessThan(b.imbalanceShare);
  });

  it('says so in the summary and offers the split in what to try', async () => {
    const r = await cli('simulate', 'scenarios/llama2-13b-tp8-nvswitch.yaml', ...sets, '--alternatives', '3');
    // Lines wrapped to the summary's width, read as one.
    const text = r.stdout.replace(/\n {14}/g, ' ');
    expect(text).toMatch(/stages of unequal compute take \d+\.\d% of the step: stage 3 computes/);
    expect(text).toMatch(/layers per stage \d+,\d+,\d+,\d+ \(evens the stages' compute\)/);
  });
});
