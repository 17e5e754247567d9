import { describe, expect, it } from 'vitest';
import { expectedMaxStandardNormal } from '../../../src/sim/parallel/gpuSpeed.js';
import { simulateStep } from '../../../src/sim/simulateStep.js';
import { scenarioOf } from '../../helpers/scenario.js';

/** Two nodes of data parallelism: every GPU waits for the slowest at the end of backward. */
function dpOnly(extra: { noise?: Record<string, unknown>; simulation?: Record<string, unknown>; seed?: number } = {}) {
  return scenarioOf({
    cluster: { preset: 'dgx-a100-80gb', nodes: 2 },
    model: { arch: 'gpt', layers: 4, hidden: 2048, heads: 16, ffnHidden: 8192, seqLen: 1024, vocab: 51200 },
    training: { globalBatch: 64, microBatch: 2 },
    parallel: { ddp: { overlap: false } },
    ...extra,
  });
}

describe('GPU speed spread (stragglers)', () => {
  it('knows the expected largest of n standard normals (closed forms for n = 2, 3)', () => {
    expect(Math.abs(expectedMaxStandardNormal(1))).toBeLessThan(1e-3);
    // E[max of 2] = 1/√π, E[max of 3] = 3/(2√π); clamping the draws at ±3 moves them by under 1e-3.
    expect(expectedMaxStandardNormal(2)).toBeCloseTo(1 / Math.sqrt(Math.PI), 2);
    expect(expectedMaxStandardNormal(3)).toBeCloseTo(3 / (2 * Math.sqrt(Math.PI)), 2);
    // Grows with n, slower and slower, without a ceiling: only the fast side of a draw is clamped. The largest of
    // 16,384 normals averages about 3.97 (Blom's approximation Φ⁻¹((n − 0.375)/(n + 0.25)) gives 3.96).
    const e = [16, 128, 1024, 16384].map(expectedMaxStandardNormal);
    for (let i = 1; i < e.length; i++) expect(e[i]).toBeGreaterThan(e[i - 1]);
    expect(e[2] - e[1]).toBeLessThan(e[1] - e[0]);
    expect(e[3]).toBeGreaterThan(3.9);
    expect(e[3]).toBeLessThan(4.05);
    expect(() => expectedMaxStandardNormal(0)).toThrow(RangeError);
  });

  it('in symmetric mode runs every GPU at the expected slowest of the job, leaving communication as it was', () => {
    const base = simulateStep(dpOnly()).result;
    const sigma = 0.02;
    const slow = simulateStep(dpOnly({ noise: { gpuSpeedSpread: sigma } })).result;
    expect(slow.breakdown.computeS / base.breakdown.computeS).toBeCloseTo(1 + sigma * expectedMaxStandardNormal(16), 4);
    expect(slow.breakdown.commS).toBeCloseTo(base.breakdown.commS, 9);
    expect(slow.stepTimeS).toBeGreaterThan(base.stepTimeS);
    expect(slow.notes).toContain(`GPU speed spread 2.0%: every GPU computes at the expected slowest of the 16, ${(100 * sigma * expectedMaxStandardNormal(16)).toFixed(1)}% slower than the model's figures`);
    expect(base.notes.join(' ')).not.toMatch(/speed spread/);
    expect(slow.gpuSpeed).toEqual({ spread: sigma, slowestFactor: 1 + sigma * expectedMaxStandardNormal(16) });
    expect(base.gpuSpeed).toBeUndefined();
    const drawn = simulateStep(dpOnly({ seed: 5, noise: { gpuSpeedSpread: sigma }, simulation: { fidelity: 'full' } })).result.gpuSpeed!;
    expect(drawn.slowestFactor).toBeGreaterThan(1);
    expect(drawn.slowestFactor).not.toBe(slow.gpuSpeed!.slowestFactor);
  });

  it('in full fidelity draws each GPU from the seed; over seeds the step averages what symmetric mode predicts', () => {
    const sigma = 0.03;
    const symmetric = simulateStep(dpOnly({ noise: { gpuSpeedSpread: sigma } })).result.stepTimeS;
    const full = Array.from({ length: 16 }, (_, seed) => simulateStep(dpOnly({ seed, noise: { gpuSpeedSpread: sigma }, simulation: { fidelity: 'full' } })).result.stepTimeS);
    // Deterministic for a seed, different across seeds.
    expect(simulateStep(dpOnly({ seed: 3, noise: { gpuSpeedSpread: sigma }, simulation: { fidelity: 'full' } })).result.stepTimeS).toBe(full[3]);
    expect(new Set(full).size).toBeGreaterThan(8);
    const mean = full.reduce((a, b) => a + b, 0) / full.length;
    const base = simulateStep(dpOnly()).result.stepTimeS;
    // The slowdown itself (about 5% here) agrees within a fifth, the sampling error of 16 maxima.
    expect((mean - base) / (symmetric - base)).toBeGreaterThan(0.8);
    expect((mean - base) / (symmetric - base)).toBeLessThan(1.2);
  });

  it('with a pipeline, runs each stage at the expected slowest of its own GPUs, an upper estimate of what full fidelity averages', () => {
    const pipeline = (extra: { noise?: Record<string, unknown>; simulation?: Record<string, unknown>; seed?: number } = {}) =>
      scenarioOf({
        cluster: { preset: 'dgx-a100-80gb', nodes: 1 },
        model: { arch: 'gpt', layers: 8, hidden: 2048, heads: 16, ffnHidden: 8192, seqLen: 1024, vocab: 51200 },
        training: { globalBatch: 32, microBatch: 2 },
        parallel: { pp: 4 },
        ...extra,
      });
    const sigma = 0.05;
    const symmetric = simulateStep(pipeline({ noise: { gpuSpeedSpread: sigma } })).result;
    expect(symmetric.notes).toContain(`GPU speed spread 5.0%: every GPU computes at the expected slowest of the 2 of its pipeline stage, ${(100 * sigma * expectedMaxStandardNormal(2)).toFixed(1)}% slower than the model's figures`);
    const base = simulateStep(pipeline()).result.stepTimeS;
    const full = Array.from({ length: 24 }, (_, seed) => simulateStep(pipeline({ seed, noise: { gpuSpeedSpread: sigma }, simulation: { fidelity: 'full' } })).result.stepTimeS);
    const mean = full.reduce((a, b) => a + b, 0) / full.length;
    // The last stage (with the LM head) bounds this pipeline, and only part of the time: the per-stage expectation
    // overstates the mean slowdown (2.8% against 1.7%), the slowest of all eight GPUs (7.1%) by far more.
    const perStage = (symmetric.stepTimeS - base) / base;
    const allGpus = sigma * expectedMaxStandardNormal(8);
    expect((mean - base) / base).toBeGreaterThan(0.5 * perStage);
    expect((mean - base) / base).toBeLessThan(perStage);
    expect(perStage).toBeLessThan(0.5 * allGpus);
  });
});
