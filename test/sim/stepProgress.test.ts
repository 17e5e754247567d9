import { describe, expect, it } from 'vitest';
import { PROGRESS_EVENTS, Simulator } from '../../src/sim/engine/simulator.js';
import { simulateStep, type StepProgress } from '../../src/sim/simulateStep.js';
import { scenarioFromFile } from '../../src/cli/scenarioInput.js';

describe('progress of a long simulation', () => {
  it('the event loop calls onProgress once every PROGRESS_EVENTS events', () => {
    const sim = new Simulator();
    let calls = 0;
    sim.onProgress = () => calls++;
    const target = { onEvent: () => {} };
    for (let i = 0; i < 3 * PROGRESS_EVENTS + 5; i++) sim.schedule(i, target);
    sim.run();
    expect(calls).toBe(3);
  });

  it('a step reports its tasks done, never more than it has, rising, and the simulated time with them', () => {
    const seen: StepProgress[] = [];
    // Llama-2-13B, TP 8 on one node, 64 micro-batches: about 19 calls.
    const s = scenarioFromFile('scenarios/llama2-13b-tp8-nvswitch.yaml', ['training.globalBatch=256']);
    const run = simulateStep(s, { onProgress: (p) => seen.push({ ...p }) });
    expect(seen.length).toBeGreaterThan(5);
    const tasks = run.trace.program.tasks.length;
    for (const [i, p] of seen.entries()) {
      expect(p.tasks).toBe(tasks);
      expect(p.tasksDone).toBeLessThanOrEqual(tasks);
      expect(p.simulatedNs).toBeLessThanOrEqual(run.trace.makespanNs);
      if (i > 0) {
        expect(p.tasksDone).toBeGreaterThanOrEqual(seen[i - 1].tasksDone);
        expect(p.simulatedNs).toBeGreaterThanOrEqual(seen[i - 1].simulatedNs);
      }
    }
    // The same step without the callback.
    expect(simulateStep(s).result).toEqual(run.result);
  });
});
