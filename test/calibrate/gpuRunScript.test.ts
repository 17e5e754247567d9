import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * scripts/gpu/run-calibration.sh with a stand-in bundle: `.gpu/enter.sh` does nothing and `.gpu/app.tar.xz` holds a
 * `bin/clustersim.js` that pretends to calibrate (sleeping CAL_SLEEP_S, then writing a profile) and to validate.
 * Checks the script's time budget: it ends inside RUN_BUDGET_S and still validates, whatever calibrate takes.
 */
function workspace(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gpu-run-'));
  mkdirSync(join(dir, 'scripts/gpu'), { recursive: true });
  for (const f of [
    'scripts/gpu/run-calibration.sh',
    'scripts/measure-host-op.py',
    'scripts/measure-gemm-alignment.py',
    'scripts/measure-attention.py',
    'scripts/measure-softmax-fallback.py',
    'scripts/measure-llama-layer.py',
    'scripts/torch_device.py',
  ])
    cpSync(f, join(dir, f));
  mkdirSync(join(dir, '.gpu'));
  writeFileSync(join(dir, '.gpu/enter.sh'), 'echo "stand-in machine"\n');
  const app = join(dir, 'app');
  mkdirSync(join(app, 'bin'), { recursive: true });
  writeFileSync(
    join(app, 'bin/clustersim.js'),
    `
const fs = require('node:fs');
const [cmd, ...rest] = process.argv.slice(2);
const arg = (k) => rest[rest.indexOf(k) + 1];
if (cmd === 'calibrate') {
  const end = Date.now() + 1000 * Number(process.env.CAL_SLEEP_S ?? 0);
  while (Date.now() < end) {}
  fs.writeFileSync(arg('--out'), '{"schema":1}');
  console.log('calibrated');
} else if (cmd === 'check-profile') {
  fs.writeFileSync(arg('--out'), '{"cases":[]}');
  console.log('validated');
}
`,
  );
  writeFileSync(join(app, 'package.json'), '{"type":"commonjs"}');
  spawnSync('python3', [
    '-c',
    'import sys, tarfile\nt = tarfile.open(sys.argv[1], "w:xz")\nt.add(sys.argv[2], arcname=".")\nt.close()',
    join(dir, '.gpu/app.tar.xz'),
    app,
  ]);
  return dir;
}

function runScript(env: Record<string, string>, files: Record<string, string> = {}) {
  const dir = workspace();
  for (const [f, text] of Object.entries(files)) {
    mkdirSync(join(dir, f, '..'), { recursive: true });
    writeFileSync(join(dir, f), text);
  }
  const out = join(dir, 'out');
  const t0 = Date.now();
  const r = spawnSync('bash', ['scripts/gpu/run-calibration.sh'], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, OUT: out, ...env },
    timeout: 60_000,
  });
  return { ...r, wallS: (Date.now() - t0) / 1e3, out: join(out, 'calibration') };
}

describe('scripts/gpu/run-calibration.sh', () => {
  it('calibrates, then validates, and keeps every output under $OUT/calibration', () => {
    const r = runScript({ RUN_BUDGET_S: '60', VALIDATE_RESERVE_S: '10' });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('calibrated');
    expect(r.stdout).toContain('validated');
    expect(JSON.parse(readFileSync(join(r.out, 'profile.json'), 'utf8')).schema).toBe(1);
    expect(readFileSync(join(r.out, 'validate.json'), 'utf8')).toContain('cases');
    // The three optional GPU-side measurements come last; without PyTorch and a GPU here they fail and say so.
    expect(r.stdout.indexOf('== attention')).toBeGreaterThan(r.stdout.indexOf('validated'));
    expect(r.stdout).toMatch(/== softmax-fallback\n(softmax-fallback measurement failed|.*not measured)/);
    expect(r.stdout).toMatch(/== llama-layer\n(llama-layer measurement failed|.*not measured)/);
  });

  it('skips each last measurement when less than LAST_MIN_S of the budget is left for it', () => {
    const r = runScript({ RUN_BUDGET_S: '60', VALIDATE_RESERVE_S: '10', LAST_MIN_S: '1000' });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('validated');
    for (const name of ['attention', 'softmax-fallback', 'llama-layer'])
      expect(r.stdout).toContain(`s left of RUN_BUDGET_S: ${name} not measured`);
  });

  it('cuts calibrate so that validate still has its reserve, and ends inside the budget', () => {
    // Calibrate would take 60 s; the budget is 40 s with 30 s kept for validate, so calibrate gets what is left after
    // the short measurements less 30 s: about 10 s. The short measurements take longer on a loaded machine, so the
    // figure is checked against the time the script says was left, not against a fixed one.
    const r = runScript({ RUN_BUDGET_S: '40', VALIDATE_RESERVE_S: '30', MIN_CALIBRATE_S: '1', CAL_SLEEP_S: '60' });
    const said = /calibrate gets at most (\d+) s \((\d+) s left of the budget\)/.exec(r.stdout);
    expect(said, r.stdout).not.toBeNull();
    const [given, leftS] = [Number(said![1]), Number(said![2])];
    expect(given).toBeGreaterThanOrEqual(1);
    expect(given).toBeLessThanOrEqual(10);
    expect(Math.abs(given - (leftS - 30))).toBeLessThanOrEqual(1); // bash's SECONDS may tick between the two reads
    expect(r.stdout).toContain('calibrate exit status 124');
    expect(r.wallS).toBeLessThan(40);
    expect(r.status).toBe(1); // no profile: the measurement log is kept for --resume
    expect(r.stdout).toContain('no profile');
  });

  it(
    'resumes only a log put in reports/calibration/h200/resume.jsonl, ' +
      'never the complete log committed with a profile',
    () => {
      const committed = runScript(
        { RUN_BUDGET_S: '60', VALIDATE_RESERVE_S: '10' },
        { 'reports/calibration/h200/measurements.jsonl': '{"type":"header"}\n' },
      );
      expect(committed.stdout).toMatch(/== calibrate *\n/);
      const resumed = runScript(
        { RUN_BUDGET_S: '60', VALIDATE_RESERVE_S: '10' },
        { 'reports/calibration/h200/resume.jsonl': '{"type":"header"}\n' },
      );
      expect(resumed.stdout).toContain('== calibrate  --resume');
      expect(readFileSync(join(resumed.out, 'measurements.jsonl'), 'utf8')).toBe('{"type":"header"}\n');
    },
  );

  it('refuses to start calibrating with less than MIN_CALIBRATE_S (default 30 s) of budget left', () => {
    const r = runScript({ RUN_BUDGET_S: '20', VALIDATE_RESERVE_S: '15' });
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/s left of RUN_BUDGET_S: not enough to calibrate/);
  });
});
