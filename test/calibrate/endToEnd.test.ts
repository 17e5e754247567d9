import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readProfile } from '../../src/calibrate/profile.js';
import { addonPath } from '../../src/calibrate/native.js';
import { cli } from '../helpers/cli.js';

/**
 * The whole loop on the CPU backend, as a user runs it: calibrate --quick, validate --quick --json, resume.
 * Needs the native addon (built by `npm ci`); CLUSTERSIM_SKIP_NATIVE=1 skips it on machines without a compiler.
 * Timing accuracy is not asserted here (the test machine is shared); reports/calibration/cpu/ holds a real run.
 */
const skip = process.env.CLUSTERSIM_SKIP_NATIVE === '1';

describe.skipIf(skip)('the CPU backend end to end (--quick)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'clustersim-e2e-'));
  const out = join(dir, 'cpu.json');
  const log = join(dir, 'cpu.measurements.jsonl');

  it('has its native addon built', () => {
    expect(
      existsSync(addonPath()),
      `${addonPath()} is missing: run npm run build:native (or set CLUSTERSIM_SKIP_NATIVE=1)`,
    ).toBe(true);
  });

  it('calibrates: writes a valid profile and a measurement log with one line per measurement', async () => {
    const r = await cli('calibrate', '--backend', 'cpu', '--quick', '--out', out);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/cpu calibration of/);
    expect(r.out).toMatch(/fp32 +\d/);
    const p = readProfile(out);
    expect(p.backend).toBe('cpu');
    expect(p.fit.gemm.fp32?.ceilingTflops).toBeGreaterThan(0);
    expect(p.fit.copies.h2h.bandwidthGBps).toBeGreaterThan(0);
    expect(p.fit.collectives.map((c) => c.op).sort()).toEqual(['all_gather', 'all_reduce', 'reduce_scatter']);
    expect(p.fit.overlap?.bothS).toBeGreaterThan(0);
    const lines = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines[0]).toEqual(expect.objectContaining({ type: 'header', backend: 'cpu', quick: true }));
    expect(lines.length - 1).toBe(p.measurements.length);
  });

  it('validates held-out workloads, prints each case as JSON with a summary, and fails above --max-error', async () => {
    // A limit no real measurement meets, so one run shows both the report and the failing exit status.
    const r = await cli('check-profile', '--profile', out, '--quick', '--json', '--max-error', '0.000001');
    expect(r.code).toBe(3);
    expect(r.err).toMatch(/median \|error\| .* is above --max-error 0.000001%/);
    const { cases, summary } = JSON.parse(r.out);
    expect(cases.length).toBeGreaterThanOrEqual(10);
    for (const c of cases) {
      expect(c).toEqual(
        expect.objectContaining({
          name: expect.any(String),
          predictedS: expect.any(Number),
          measuredS: expect.any(Number),
          errorPct: expect.any(Number),
        }),
      );
      expect(c.predictedS).toBeGreaterThan(0);
      expect(c.errorPct).toBeCloseTo((100 * (c.predictedS - c.measuredS)) / c.measuredS, 6);
    }
    expect(new Set(cases.map((c: { kind: string }) => c.kind))).toEqual(
      new Set(['gemm', 'chain', 'overlap', 'copy', 'collective']),
    );
    expect(summary.cases).toBe(cases.length);
    expect(summary.medianErrorPct).toBeGreaterThanOrEqual(0);
    expect(summary.skipped).toEqual([]);
  }, 60_000);

  it('resumes: with every measurement in the log nothing is measured again', async () => {
    const r = await cli('calibrate', '--backend', 'cpu', '--quick', '--out', out, '--resume');
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/\(0 measured now, \d+ from the log\)/);
    const again = await cli('calibrate', '--backend', 'cpu', '--quick', '--out', out);
    expect(again.code).toBe(2);
    expect(again.err).toMatch(/already holds measurements: pass --resume/);
  });
});
