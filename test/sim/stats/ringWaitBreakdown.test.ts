import { describe, expect, it } from 'vitest';
import { simulateStep } from '../../../src/sim/simulateStep.js';
import { scenarioOf } from '../../helpers/scenario.js';

/** A context-parallel ring of 4 over two nodes: two of its hops cross the network, two stay on NVLink. */
const ring = (fidelity: 'symmetric' | 'full') =>
  scenarioOf({
    cluster: { preset: 'dgx-h100', nodes: 2 },
    model: { preset: 'llama2-7b', seqLen: 16384 },
    training: { globalBatch: 2, microBatch: 1 },
    parallel: { tp: 4, cp: 4, sequenceParallel: true },
    simulation: { fidelity },
  });

describe('breakdown of a rank that waits for a message it receives', () => {
  it(
    "counts the wait for a ring predecessor's send as exposed communication, " +
      'so full fidelity agrees with symmetric mode',
    () => {
      const symmetric = simulateStep(ring('symmetric')).result;
      const full = simulateStep(ring('full')).result;
      expect(full.stepTimeS).toBeCloseTo(symmetric.stepTimeS, 6);
      // A rank whose own hop is on NVLink waits for its predecessor's network hop: communication, not load imbalance.
      expect(full.breakdown.exposedCommS).toBeCloseTo(symmetric.breakdown.exposedCommS, 4);
      expect(full.breakdown.idleS).toBeLessThan(0.01 * full.stepTimeS);
      expect(full.bottleneck.bound).toBe('exposed communication');
    },
  );
});
