import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { BUILT_BIN, buildCli } from '../cli/builtCli.js';

beforeAll(buildCli, 300_000);

describe('check-profile cut short by Ctrl-C', () => {
  it('says in its --out file that the run was interrupted, so that the summary is not read as the whole', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'clustersim-vint-')), 'v.json');
    const child = spawn(
      process.execPath,
      [BUILT_BIN, 'check-profile', '--profile', 'reports/calibration/cpu/profile.json', '--out', out],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let err = '';
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      // Once some cases have run (the second group's line says how many), as a user pressing Ctrl-C would; a fixed
      // delay could land before the first case on a loaded machine.
      if (!child.killed && /^check-profile: \w+ \(([1-9]\d*)\/24 done\)$/m.test(err)) child.kill('SIGINT');
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    expect(code).toBe(130);
    expect(err).toMatch(/validation interrupted; the cases above ran/);
    const doc = JSON.parse(readFileSync(out, 'utf8'));
    expect(doc.interrupted).toBe(true);
    expect(doc.cases.length).toBeGreaterThan(0);
    expect(doc.cases.length).toBeLessThan(24);
  }, 120_000);
});
