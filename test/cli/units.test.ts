import { describe, expect, it } from 'vitest';
import { formatSeconds } from '../../src/cli/units.js';
import { tflopsText } from '../../src/report/format.js';
import { formatProfile } from '../../src/cli/calibrateCommand.js';
import { syntheticProfile } from '../calibrate/fixtures.js';

describe('formatSeconds', () => {
  it.each([
    [2.5, '2.500 s'],
    [0.0125, '12.50 ms'],
    [3.5e-6, '3.5 µs'],
    [9.4e-9, '9.4 ns'],
    [5e-10, '0.5 ns'],
    [0, '0.0 µs'],
  ])('writes %s s as %s', (s, text) => {
    expect(formatSeconds(s)).toBe(text);
  });
});

describe('the calibration summary', () => {
  it('prints a launch overhead below a microsecond in ns, as the CPU backend measures it', () => {
    const p = syntheticProfile();
    p.fit.launchS = 9.4e-9;
    expect(formatProfile(p).split('\n')[1]).toBe('  launch overhead     9.4 ns');
  });

  it('marks a latency the fit clamped at 0 and says why, and only then', () => {
    const p = syntheticProfile();
    const collective = p.fit.collectives[0];
    collective.latencyS = 0;
    const text = formatProfile(p);
    const row = text.split('\n').find((l) => l.includes(`${collective.op} ×${collective.ranks}`));
    expect(row).toMatch(/ 0 \* /);
    expect(text).toContain('* the fitted latency came out below zero');
    collective.latencyS = 2e-6;
    expect(formatProfile(p)).not.toContain('came out below zero');
  });
});

describe('tflopsText', () => {
  it.each([
    [312, '312.0'],
    [65.14, '65.1'],
    [10, '10.0'],
    [9.876, '9.88'],
    [0.052, '0.0520'],
    [0, '0.0'],
  ])('%s TFLOP/s prints as %s (three significant digits below 10)', (tflops, text) => {
    expect(tflopsText(tflops)).toBe(text);
  });
});
