import { describe, expect, it } from 'vitest';
import { simulateStep, type StepRun } from '../../src/sim/simulateStep.js';
import { ALL_SHORTCUTS, type Shortcuts } from '../../src/sim/shortcuts.js';
import { scenarioOf } from '../helpers/scenario.js';

// Each speed shortcut against the plain path it stands for: the same step with the shortcut switched off must give
// every task the same start and end. Idle windows, shadow pruning and repeat skipping are exact to the ns; the
// incremental rates equal the full solve up to its rounding, so there a task may move by a few ns over a step.

const cases: [string, Record<string, unknown>][] = [
  [
    'DDP over a 4:1 oversubscribed Ethernet fabric (shadow replicas on shared links)',
    {
      cluster: { preset: 'dgx-a100-80gb', nodes: 4, network: { preset: 'roce-100', oversubscription: 4 } },
      model: { preset: 'bert-large' },
      training: { globalBatch: 256, microBatch: 8 },
    },
  ],
  [
    'DDP over 2 nodes with step-mode rings (the gradient all-reduce alone on the network: ring steps to skip)',
    {
      cluster: { preset: 'dgx-a100-80gb', nodes: 2 },
      model: { preset: 'bert-large' },
      training: { globalBatch: 256, microBatch: 8 },
      comm: { mode: 'step' },
    },
  ],
  [
    'TP 2 × PP 2 × DP 4, step-mode collectives',
    {
      cluster: { preset: 'dgx-a100-80gb', nodes: 2 },
      model: { preset: 'gpt3-1.3b' },
      training: { globalBatch: 32, microBatch: 2 },
      parallel: { tp: 2, pp: 2 },
      comm: { mode: 'step' },
    },
  ],
  [
    'TP 4 × PP 2 × DP 2, interleaved, ZeRO-1 with sequence parallelism',
    {
      cluster: { preset: 'dgx-h100', nodes: 2 },
      model: { preset: 'llama2-7b', seqLen: 2048 },
      training: { globalBatch: 16, microBatch: 1 },
      parallel: { tp: 4, pp: 2, zero: 1, sequenceParallel: true, schedule: 'interleaved', virtualStages: 2 },
    },
  ],
  [
    'ZeRO-3 over 2 nodes',
    {
      cluster: { preset: 'dgx-a100-80gb', nodes: 2 },
      model: { preset: 'llama2-7b', seqLen: 1024 },
      training: { globalBatch: 16, microBatch: 1 },
      parallel: { zero: 3 },
    },
  ],
];

const run = (raw: Record<string, unknown>, off: Partial<Shortcuts> = {}): StepRun =>
  simulateStep(scenarioOf(raw), { shortcuts: off });

/** The largest difference between two runs' task start and end times, ns (the programs are the same). */
function largestShiftNs(a: StepRun, b: StepRun): number {
  expect(a.trace.startNs.length).toBe(b.trace.startNs.length);
  let most = 0;
  for (let i = 0; i < a.trace.startNs.length; i++) {
    most = Math.max(
      most,
      Math.abs(a.trace.startNs[i] - b.trace.startNs[i]),
      Math.abs(a.trace.endNs[i] - b.trace.endNs[i]),
    );
  }
  return most;
}

// A shortcut is compared both with the others on and with idle windows off: idle windows take most collectives off
// the network, and the shortcuts of the flows beneath (repeat skipping above all) act only where flows run.
const BASES: Partial<Shortcuts>[] = [{}, { idleWindows: false }];

describe('each speed shortcut gives what the plain path gives', () => {
  for (const [name, raw] of cases) {
    it(`idle windows, shadow pruning and repeat skipping are exact: ${name}`, () => {
      for (const base of BASES) {
        const all = run(raw, base);
        for (const s of ['idleWindows', 'shadowPruning', 'repeatSkipping'] as const)
          expect(largestShiftNs(all, run(raw, { ...base, [s]: false })), s).toBe(0);
      }
    });
    it(`incremental rates move no task by more than a few ns: ${name}`, () => {
      for (const base of BASES) {
        const plain = run(raw, { ...base, incrementalRates: false });
        expect(largestShiftNs(run(raw, base), plain)).toBeLessThanOrEqual(4);
        expect(plain.result.shortcuts.fullRateSolves).toBe(plain.result.shortcuts.rateSolves);
      }
    });
  }

  it('with every shortcut off, the step is the same as with all on (up to the rate rounding)', () => {
    const raw = cases[1][1];
    const off = Object.fromEntries(Object.keys(ALL_SHORTCUTS).map((k) => [k, false])) as Partial<Shortcuts>;
    const plain = run(raw, off);
    expect(largestShiftNs(run(raw), plain)).toBeLessThanOrEqual(4);
    // The plain path simulates more: every ring step, every shadow, every collective as flows.
    expect(plain.result.eventsFired).toBeGreaterThan(run(raw).result.eventsFired);
  });
});

describe('the cases above', () => {
  // What a shortcut saves: events, except for the incremental rates, which save solve work (full solves) instead.
  const work = (r: StepRun, s: keyof Shortcuts) =>
    s === 'incrementalRates' ? r.result.shortcuts.fullRateSolves : r.result.eventsFired;
  it('let every shortcut act somewhere: switching it off changes the work done in at least one', () => {
    for (const s of Object.keys(ALL_SHORTCUTS) as (keyof Shortcuts)[]) {
      const acts = cases.some(([, raw]) =>
        BASES.some((base) => work(run(raw, { ...base, [s]: false }), s) !== work(run(raw, base), s)),
      );
      expect(acts, s).toBe(true);
    }
  });
});

describe('the fallbacks of the shortcuts', () => {
  it('are reported with the result: no rerun here, and full solves among the solves', () => {
    const r = run(cases[3][1]).result.shortcuts;
    expect(r.idleWindowReruns).toBe(0);
    expect(r.fullRateSolves).toBeLessThanOrEqual(r.rateSolves);
    expect(r.rateSolves).toBeGreaterThan(0);
  });

  it('are not counted for a path that was switched off: no rerun without idle windows', () => {
    expect(run(cases[0][1], { idleWindows: false }).result.shortcuts.idleWindowReruns).toBe(0);
  });
});
