import { describe, expect, it } from 'vitest';
import { simulateStep } from '../../../src/sim/simulateStep.js';
import { scenarioOf } from '../../helpers/scenario.js';

const cases: [string, Record<string, unknown>][] = [
  [
    'DDP on 4 DGX A100 nodes',
    {
      cluster: { preset: 'dgx-a100-80gb', nodes: 4 },
      model: { preset: 'bert-large' },
      training: { globalBatch: 256, microBatch: 8 },
    },
  ],
  [
    'DDP over an oversubscribed, shared-leaf Ethernet fabric',
    {
      cluster: {
        preset: 'dgx-a100-80gb',
        nodes: 4,
        network: { preset: 'roce-100', oversubscription: 4, nodesPerLeaf: 1, railOptimized: false },
      },
      model: { preset: 'bert-large' },
      training: { globalBatch: 256, microBatch: 8 },
    },
  ],
  [
    'TP 2 × PP 2 × DP 8 with a 4:1 oversubscribed spine',
    {
      cluster: {
        preset: 'dgx-a100-80gb',
        nodes: 4,
        network: { preset: 'ib-hdr', oversubscription: 4, nodesPerLeaf: 1 },
      },
      model: { preset: 'gpt3-1.3b' },
      training: { globalBatch: 64, microBatch: 2 },
      parallel: { tp: 2, pp: 2 },
    },
  ],
  [
    'TP 8 × PP 2 with stages on different nodes, interleaved',
    {
      cluster: {
        preset: 'dgx-a100-80gb',
        nodes: 4,
        network: { preset: 'roce-100', oversubscription: 2, nodesPerLeaf: 2 },
      },
      model: { preset: 'gpt3-1.3b' },
      training: { globalBatch: 32, microBatch: 2 },
      parallel: { tp: 8, pp: 2, schedule: 'interleaved', virtualStages: 2 },
    },
  ],
  [
    'TP 4 × PP 2 × DP 2 with sequence parallelism and ZeRO-1 on a ' +
      '4:1 oversubscribed Ethernet fabric that is not rail-optimised',
    {
      cluster: {
        preset: 'dgx-a100-80gb',
        nodes: 2,
        network: { preset: 'roce-100', oversubscription: 4, nodesPerLeaf: 1, railOptimized: false },
      },
      model: { preset: 'gpt3-1.3b' },
      training: { globalBatch: 32, microBatch: 2 },
      parallel: { tp: 4, pp: 2, sequenceParallel: true, zero: 1 },
    },
  ],
  [
    'TP 16 across two nodes × PP 2, 1F1B, oversubscribed',
    {
      cluster: {
        preset: 'dgx-a100-80gb',
        nodes: 4,
        network: { preset: 'ib-hdr', oversubscription: 2, nodesPerLeaf: 2 },
      },
      model: { preset: 'gpt3-1.3b' },
      training: { globalBatch: 8, microBatch: 1 },
      parallel: { tp: 16, pp: 2, schedule: '1f1b' },
    },
  ],
  [
    'TP 2 × DP 8 with ZeRO-3',
    {
      cluster: { preset: 'dgx-a100-80gb', nodes: 2 },
      model: { preset: 'llama2-7b', seqLen: 1024 },
      training: { globalBatch: 16, microBatch: 1 },
      parallel: { tp: 2, zero: 3 },
    },
  ],
  [
    'ZeRO-3 on 2 nodes',
    {
      cluster: { preset: 'dgx-a100-80gb', nodes: 2 },
      model: { preset: 'llama2-7b', seqLen: 1024 },
      training: { globalBatch: 16, microBatch: 1 },
      parallel: { zero: 3 },
    },
  ],
];

describe('symmetric and full fidelity', () => {
  it('agree on the breakdown too, with TP and PP over an oversubscribed fabric', () => {
    const raw = cases[2][1];
    const sym = simulateStep(scenarioOf({ ...raw, simulation: { fidelity: 'symmetric' } })).result;
    const full = simulateStep(scenarioOf({ ...raw, simulation: { fidelity: 'full' } })).result;
    for (const k of ['computeS', 'exposedCommS', 'bubbleS', 'commS'] as const)
      expect(Math.abs(sym.breakdown[k] - full.breakdown[k]) / full.stepTimeS).toBeLessThan(0.01);
  });

  for (const [name, raw] of cases) {
    it(`give the same step time within 1%: ${name}`, () => {
      const sym = simulateStep(scenarioOf({ ...raw, simulation: { fidelity: 'symmetric' } }));
      const full = simulateStep(scenarioOf({ ...raw, simulation: { fidelity: 'full' } }));
      expect(Math.abs(sym.result.stepTimeS - full.result.stepTimeS) / full.result.stepTimeS).toBeLessThan(0.01);
      // The symmetric run really simulates one rank per TP group of one replica: one per stage.
      expect(sym.plan.program.simulatedRanks.length).toBe(full.result.parallel.pp);
      expect(full.plan.program.simulatedRanks.length).toBe(full.result.gpus);
    });
  }

  it('falls back to full fidelity when compute jitter makes replicas differ', () => {
    const s = scenarioOf({ ...cases[0][1], noise: { computeJitter: 0.05 } });
    expect(s.fidelity).toBe('full');
  });
});
