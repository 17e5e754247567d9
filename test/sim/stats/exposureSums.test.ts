import { describe, expect, it } from 'vitest';
import { simulateStep } from '../../../src/sim/simulateStep.js';
import { scenarioOf } from '../../helpers/scenario.js';

/** A step's exposed communication, and the sum of its rows by traffic, s. */
function exposedAndRows(parallel: Record<string, unknown>): { exposedS: number; rowsS: number; kinds: string[] } {
  const r = simulateStep(
    scenarioOf({
      name: 'x',
      cluster: { preset: 'dgx-a100-80gb', nodes: 1 },
      model: { preset: 'llama2-7b' },
      training: { globalBatch: 16, microBatch: 1, seqLen: 2048 },
      parallel,
    }),
  ).result;
  const rows = r.bottleneck.exposure;
  return {
    exposedS: r.breakdown.exposedCommS,
    rowsS: rows.reduce((sum, e) => sum + e.exposedS, 0),
    kinds: rows.map((e) => `${e.kind}/${e.medium}`),
  };
}

describe('exposed communication by traffic', () => {
  it.each([
    ['ZeRO-2 with the optimizer offloaded to the host', { zero: 2, offload: 'cpu' }],
    ['ZeRO-3', { zero: 3 }],
    ['tensor and pipeline parallel', { tp: 2, pp: 2 }],
    ['context parallel (a ring of key/value sends)', { tp: 2, cp: 2 }],
  ])('adds up to the exposed communication of the step: %s', (_name, parallel) => {
    const { exposedS, rowsS } = exposedAndRows(parallel);
    expect(exposedS).toBeGreaterThan(0);
    expect(rowsS).toBeCloseTo(exposedS, 9);
  });

  it('names the copies to and from the host, over PCIe, with CPU offload', () => {
    const { kinds } = exposedAndRows({ zero: 2, offload: 'cpu' });
    expect(kinds).toEqual(expect.arrayContaining(['d2h/pcie', 'h2d/pcie']));
  });
});
