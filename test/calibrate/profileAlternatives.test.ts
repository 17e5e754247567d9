import { describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli.js';

// The CPU profile committed with the calibration report: a real profile, made by `clustersim calibrate --backend cpu`.
const PROFILE = 'reports/calibration/cpu/profile.json';
const SCENARIO = 'scenarios/llama2-7b-zero3-pcie.yaml';

describe('simulate --profile', () => {
  it('simulates the alternatives with the profile too, and --json says which profile replaced what', async () => {
    const base = ['simulate', SCENARIO, '--profile', PROFILE, '--set', 'training.precision=fp32', '--json'];
    const r = await cli(...base, '--alternatives', '1');
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.out);
    expect(doc.profile.file).toBe(PROFILE);
    expect(doc.profile.applied.join('; ')).toMatch(/GPU replaced by the calibrated CPU device/);
    const [alt] = doc.alternatives as { sets: string[]; stepTimeS: number; peakBytesPerGpu: number }[];
    // The same change, run by hand with the profile, gives the same step and memory.
    const byHand = JSON.parse(
      (await cli(...base, '--alternatives', '0', ...alt.sets.flatMap((s) => ['--set', s]))).out,
    );
    expect(alt.stepTimeS).toBe(byHand.stepTimeS);
    expect(alt.peakBytesPerGpu).toBe(byHand.memory.peakBytesPerGpu);
    // Without the profile the same change is another number: the alternative did not fall back to the preset GPU.
    const preset = JSON.parse(
      (
        await cli(
          'simulate',
          SCENARIO,
          '--set',
          'training.precision=fp32',
          '--json',
          '--alternatives',
          '0',
          ...alt.sets.flatMap((s) => ['--set', s]),
        )
      ).out,
    );
    expect(preset.stepTimeS).not.toBe(alt.stepTimeS);
  });

  it('refuses a GPU profile measured on another GPU preset, and says how to simulate that GPU', async () => {
    const r = await cli(
      'simulate',
      SCENARIO,
      '--profile',
      'reports/calibration/h200/profile.json',
      '--alternatives',
      '0',
    );
    expect(r.code).toBe(2);
    expect(r.err).toMatch(
      new RegExp(
        /--profile reports\/calibration\/h200\/profile.json: measured on NVIDIA H200 \(h200-sxm-141gb\), /.source +
          /but the scenario's GPU is a100-sxm4-80gb; simulate that GPU \(--set cluster.gpu=h200-sxm-141gb\)/.source,
      ),
    );
    expect(r.err).not.toMatch(/\n\s+at /);
    const same = await cli(
      'simulate',
      SCENARIO,
      '--profile',
      'reports/calibration/h200/profile.json',
      '--set',
      'cluster.gpu=h200-sxm-141gb',
      '--alternatives',
      '0',
      '--json',
    );
    expect(same.code).toBe(0);
    expect(JSON.parse(same.out).mfu).toBeLessThan(1);
  });
});
