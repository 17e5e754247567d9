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
    expect(slow.notes).toContain(
      `GPU speed spread 2.0%: every GPU computes at the expected slowest of the ` +
        `16, ${(100 * sigma * expectedMaxStandardNormal(16)).toFixed(1)}% slower than the model's figures`,
    );
    expect(base.notes.join(' ')).not.toMatch(/speed spread/);
    expect(slow.gpuSpeed).toEqual({ spread: sigma, slowestFactor: 1 + sigma * expectedMaxStandardNormal(16) });
    expect(base.gpuSpeed).toBeUndefined();
    const drawn = simulateStep(dpOnly({ seed: 5, noise: { gpuSpeedSpread: sigma }, simulation: { fidelity: 'full' } }))
      .result.gpuSpeed!;
    expect(drawn.slowestFactor).toBeGreaterThan(1);
    expect(drawn.slowestFactor).not.toBe(slow.gpuSpeed!.slowestFactor);
  });

  it('in full fidelity draws each GPU from the seed; over seeds the step averages what symmetric mode predicts', () => {
    const sigma = 0.03;
    const symmetric = simulateStep(dpOnly({ noise: { gpuSpeedSpread: sigma } })).result.stepTimeS;
    const full = Array.from(
      { length: 16 },
      (_, seed) =>
        simulateStep(dpOnly({ seed, noise: { gpuSpeedSpread: sigma }, simulation: { fidelity: 'full' } })).result
          .stepTimeS,
    );
    // Deterministic for a seed, different across seeds.
    expect(
      simulateStep(dpOnly({ seed: 3, noise: { gpuSpeedSpread: sigma }, simulation: { fidelity: 'full' } })).result
        .stepTimeS,
    ).toBe(full[3]);
    expect(new Set(full).size).toBeGreaterThan(8);
    const mean = full.reduce((a, b) => a + b, 0) / full.length;
    const base = simulateStep(dpOnly()).result.stepTimeS;
    // The slowdown itself (about 5% here) agrees within a fifth, the sampling error of 16 maxima.
    expect((mean - base) / (symmetric - base)).toBeGreaterThan(0.8);
    expect((mean - base) / (symmetric - base)).toBeLessThan(1.2);
  });

  it('with a pipeline, gives an upper estimate of what full fidelity averages over seeds, balanced or not', () => {
    const gpt = (layers: number, vocab: number) => ({
      arch: 'gpt',
      layers,
      hidden: 2048,
      heads: 16,
      ffnHidden: 8192,
      seqLen: 1024,
      vocab,
    });
    const cases = [
      // The last stage (with a 51,200-word LM head) bounds this one; its stages hold two replicas each.
      {
        cluster: { preset: 'dgx-a100-80gb', nodes: 1 },
        model: gpt(8, 51200),
        training: { globalBatch: 32, microBatch: 2 },
        parallel: { pp: 4 },
      },
      // Balanced stages: the pipeline waits for whichever holds the slowest GPU; one replica, then four.
      {
        cluster: { preset: 'dgx-a100-80gb', nodes: 1 },
        model: gpt(16, 1024),
        training: { globalBatch: 64, microBatch: 1 },
        parallel: { pp: 8 },
      },
      {
        cluster: { preset: 'dgx-a100-80gb', nodes: 2 },
        model: gpt(16, 1024),
        training: { globalBatch: 64, microBatch: 1 },
        parallel: { pp: 4 },
      },
    ];
    const sigma = 0.05;
    for (const raw of cases) {
      const base = simulateStep(scenarioOf(raw)).result.stepTimeS;
      const slowdown = (seed: number, fidelity: string) =>
        simulateStep(scenarioOf({ ...raw, seed, noise: { gpuSpeedSpread: sigma }, simulation: { fidelity } })).result
          .stepTimeS /
          base -
        1;
      const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
      const symmetric = mean(Array.from({ length: 8 }, (_, seed) => slowdown(seed, 'symmetric')));
      const full = mean(Array.from({ length: 24 }, (_, seed) => slowdown(seed + 1000, 'full')));
      // Measured with 40 seeds: 1.76, 1.07 and 1.25 times full fidelity's mean; never below it.
      expect(symmetric / full).toBeGreaterThan(0.95);
      expect(symmetric / full).toBeLessThan(2);
    }
    const s = scenarioOf({ ...cases[1], noise: { gpuSpeedSpread: sigma } });
    expect(simulateStep(s).result.notes.join(' ')).toMatch(
      new RegExp(
        /GPU speed spread 5.0%: every stage computes at the expected slowest of its 1 GPUs \(0.0% /.source +
          /slower\), and stage \d holds the expected slowest of all 8 \(7.1% slower\), drawn from seed \d+/.source,
      ),
    );
  });
});
