import { describe, expect, it } from 'vitest';
import { fittingMicroBatch } from '../../src/sweep/scale.js';
import { withScaling, type ScaleRow } from '../../src/sweep/scaleMath.js';
import { cli } from '../helpers/badInput.js';

// Issue 26, item 16: strong scaling lowers the micro-batch where more replicas leave each fewer sequences, and
// measures efficiency against a size that fits.
describe('the micro-batch a strong-scaling size runs with', () => {
  it('keeps the scenario’s where it divides the sequences per replica', () => {
    expect(fittingMicroBatch(256, 8, 4)).toBe(4);
  });

  it('takes the largest that divides them and is no larger than the scenario’s', () => {
    expect(fittingMicroBatch(256, 128, 4)).toBe(2);
    expect(fittingMicroBatch(96, 8, 8)).toBe(6);
    expect(fittingMicroBatch(16, 16, 2)).toBe(1);
  });

  it('has none where the replicas do not split the batch', () => {
    expect(fittingMicroBatch(256, 512, 1)).toBeUndefined();
    expect(fittingMicroBatch(100, 8, 2)).toBeUndefined();
  });

  it('runs a size that was "not divisible" before, saying the micro-batch in the note and the JSON', async () => {
    const r = await cli('scale', 'scenarios/llama2-13b-tp8-nvswitch.yaml', '--gpus', '64,128', '--json');
    expect(r.code, r.stderr).toBe(0);
    const rows = (JSON.parse(r.stdout) as { series: { rows: ScaleRow[] }[] }).series[0].rows;
    expect(rows.map((x) => [x.gpus, x.status, x.microBatch])).toEqual([
      [64, 'ok', undefined],
      [128, 'ok', 1],
    ]);
    const text = await cli('scale', 'scenarios/llama2-13b-tp8-nvswitch.yaml', '--gpus', '64,128');
    expect(text.stdout).toMatch(/\n +128 .* yes +micro-batch 1\n?/);
  });
});

describe('the size efficiency is measured against', () => {
  const row = (gpus: number, status: ScaleRow['status'], samplesPerS: number): ScaleRow => ({
    gpus,
    status,
    samplesPerS,
    stepTimeS: 1,
    memoryBytesPerGpu: 1,
  });

  it('is the smallest size that fits, not a smaller one that does not', () => {
    const scaled = withScaling([row(8, 'oom', 1), row(16, 'ok', 1.9), row(32, 'ok', 3.8)]);
    expect(scaled.map((r) => r.speedup)).toEqual([1 / 1.9, 1, 2]);
    expect(scaled[2].efficiency).toBeCloseTo(1, 12);
  });

  it('is the smallest simulated where no size fits', () => {
    expect(withScaling([row(8, 'oom', 1), row(16, 'oom', 2)]).map((r) => r.speedup)).toEqual([1, 2]);
  });

  it('says so in the table heading', async () => {
    const r = await cli(
      'scale',
      'scenarios/llama2-70b-zero2-8xa100.yaml',
      '--gpus',
      '8..32',
      '--set',
      'parallel.zero=3',
      '--set',
      'training.microBatch=1',
    );
    expect(r.stdout).toContain('speedup and efficiency against 16 GPUs, the smallest size that fits');
  });
});
