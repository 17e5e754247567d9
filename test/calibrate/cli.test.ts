import { mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeProfile } from '../../src/calibrate/profile.js';
import { summariseCases } from '../../src/calibrate/validateRun.js';
import { defaultLogPath, formatProfile } from '../../src/cli/calibrateCommand.js';
import { formatValidation, parsePercent } from '../../src/cli/validateCommand.js';
import { cli } from '../helpers/cli.js';
import { syntheticProfile } from './fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'clustersim-cli-'));

describe('calibrate and validate: argument validation', () => {
  it('calibrate needs --out and a known backend', async () => {
    expect((await cli('calibrate')).code).toBe(2);
    const r = await cli('calibrate', '--backend', 'tpu', '--out', join(dir, 'x.json'));
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--backend.*Allowed choices are auto, cuda, cpu/);
  });

  it('calibrate checks --threads', async () => {
    expect((await cli('calibrate', '--backend', 'cpu', '--threads', '0', '--out', join(dir, 'x.json'))).err).toMatch(
      /--threads: expected a whole number ≥ 1, got '0'/,
    );
    expect((await cli('calibrate', '--backend', 'cuda', '--threads', '2', '--out', join(dir, 'x.json'))).err).toMatch(
      /--threads applies to the cpu backend only/,
    );
    const wall = await cli('calibrate', '--backend', 'cuda', '--wall-clock', '--out', join(dir, 'x.json'));
    expect(wall.code).toBe(2);
    expect(wall.err).toMatch(/--wall-clock applies to the cpu backend only/);
    // More GEMM threads than cores: refused before anything is measured.
    const many = await cli(
      'calibrate',
      '--backend',
      'cpu',
      '--quick',
      '--threads',
      '100000',
      '--out',
      join(dir, 'many.json'),
    );
    expect(many.code).toBe(2);
    expect(many.err).toMatch(
      /100000 GEMM threads are more than the \d+ logical cores here: .*give --threads \d+ or fewer/,
    );
  });

  it(
    'calibrate refuses --out and --log naming the same file ' + '(the profile would overwrite its measurements)',
    async () => {
      const same = join(dir, 'same.jsonl');
      const r = await cli('calibrate', '--backend', 'cpu', '--quick', '--out', same, '--log', `${dir}/./same.jsonl`);
      expect(r.code).toBe(2);
      expect(r.err).toMatch(/--out and --log are the same file .*give the log another name/);
      // Through a link, dangling until the profile is written.
      const link = join(dir, 'link.jsonl');
      symlinkSync('linked.json', link);
      const viaLink = await cli(
        'calibrate',
        '--backend',
        'cpu',
        '--quick',
        '--out',
        join(dir, 'linked.json'),
        '--log',
        link,
      );
      expect(viaLink.code).toBe(2);
      expect(viaLink.err).toMatch(/--out and --log are the same file/);
    },
  );

  it('calibrate --resume without a log says how to start', async () => {
    const r = await cli('calibrate', '--backend', 'cpu', '--quick', '--resume', '--out', join(dir, 'none.json'));
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--resume: .*none.measurements.jsonl does not exist; run without --resume/);
  });

  it('validate needs a readable profile and a sensible --max-error', async () => {
    expect((await cli('check-profile')).code).toBe(2);
    const missing = await cli('check-profile', '--profile', join(dir, 'missing.json'));
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/cannot read profile .*missing.json: no such file/);
    writeFileSync(join(dir, 'junk.json'), '{"schema":"clustersim.profile","schemaVersion":1}');
    expect((await cli('check-profile', '--profile', join(dir, 'junk.json'))).err).toMatch(
      /is not a valid clustersim profile/,
    );
    const bad = await cli('check-profile', '--profile', join(dir, 'junk.json'), '--max-error', 'ten');
    expect(bad.err).toMatch(/--max-error: expected a percentage greater than 0/);
    expect(parsePercent('15%', '--max-error')).toBe(15);
    expect(parsePercent(' 2.5 ', '--max-error')).toBe(2.5);
  });

  it('validate says a JSON file that is not a profile is not one, what it holds and how to make one', async () => {
    const other = join(dir, 'package.json');
    writeFileSync(other, JSON.stringify({ name: 'x', version: '1.0.0' }));
    const r = await cli('check-profile', '--profile', other);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toBe(
      `clustersim: ${other} is not a clustersim calibration profile: ` +
        'it holds an object with the fields name, version, and no "schema", ' +
        'but a profile is a JSON object with "schema": "clustersim.profile", the fitted constants of a machine; ' +
        'make one with `clustersim calibrate --out profile.json`\n',
    );
  });

  it(
    'validate refuses a CPU profile measured with more GEMM threads than this machine has cores, ' + 'in its own words',
    async () => {
      const big = syntheticProfile({ backend: 'cpu' });
      const path = join(dir, 'big-cpu.json');
      writeProfile(path, { ...big, machine: { ...big.machine, computeThreads: 100000 } });
      const r = await cli('check-profile', '--profile', path, '--quick');
      expect(r.code).toBe(2);
      expect(r.err).toMatch(
        new RegExp(
          /big-cpu.json was measured with 100000 GEMM threads and this machine has \d+ logical cores: /.source +
            /validate it on a machine with at least 100000/.source,
        ),
      );
      expect(r.err).not.toMatch(/--threads/);
    },
  );

  it('puts the log next to the profile by default', () => {
    expect(defaultLogPath('out/h200.json')).toBe('out/h200.measurements.jsonl');
    expect(defaultLogPath('p')).toBe('p.measurements.jsonl');
  });
});

describe('simulate --profile', () => {
  it('replaces the GPU and link constants the profile describes and says so on stderr', async () => {
    const path = join(dir, 'a100.json');
    writeProfile(
      path,
      syntheticProfile({ backend: 'cuda', device: 'NVIDIA A100-SXM4-80GB', gpuPreset: 'a100-sxm4-80gb' }),
    );
    const base = await cli('simulate', 'scenarios/bert-large-ddp-2node.yaml', '--json');
    const withProfile = await cli(
      'simulate',
      'scenarios/bert-large-ddp-2node.yaml',
      '--json',
      '--profile',
      path,
      '--set',
      'training.precision=fp32',
    );
    expect(withProfile.code).toBe(0);
    expect(withProfile.err).toMatch(
      /profile .*a100.json: gemm fp32: measured model.*kernel launch overhead.*intra-node link bandwidth 230 →/,
    );
    expect(withProfile.err).toMatch(
      /measured collectives inside a node: all_reduce ×2 \(\d+ sizes\), all_gather ×2 \(\d+ sizes\)/,
    );
    expect(JSON.parse(withProfile.out).stepTimeS).not.toBe(JSON.parse(base.out).stepTimeS);
  });

  it(
    'names the profile in the HTML report and the trace, ' + 'and gives a calibrated CPU no MFU note from GPU runs',
    async () => {
      const gpuProfile = join(dir, 'a100-report.json');
      writeProfile(
        gpuProfile,
        syntheticProfile({ backend: 'cuda', device: 'NVIDIA A100-SXM4-80GB', gpuPreset: 'a100-sxm4-80gb' }),
      );
      const [html, trace] = [join(dir, 'p.html'), join(dir, 'p.json')];
      const r = await cli(
        'simulate',
        'scenarios/bert-large-ddp-2node.yaml',
        '--alternatives',
        '0',
        '--profile',
        gpuProfile,
        '--set',
        'training.precision=fp32',
        '--report',
        html,
        '--trace',
        trace,
      );
      expect(r.code, r.err).toBe(0);
      expect(readFileSync(html, 'utf8')).toMatch(
        /<td>calibration profile<\/td><td>[^<]*a100-report.json: gemm fp32: measured model/,
      );
      expect(
        JSON.parse(readFileSync(trace, 'utf8')).metadata?.profile ??
          JSON.stringify(JSON.parse(readFileSync(trace, 'utf8'))),
      ).toContain('a100-report.json');
      const cpuProfile = join(dir, 'cpu-report.json');
      writeProfile(cpuProfile, syntheticProfile({ backend: 'cpu' }));
      const cpu = JSON.parse(
        (
          await cli(
            'simulate',
            'scenarios/bert-large-ddp-2node.yaml',
            '--alternatives',
            '0',
            '--json',
            '--profile',
            cpuProfile,
            '--set',
            'training.precision=fp32',
          )
        ).out,
      );
      expect(cpu.mfu).toBeGreaterThan(0.65); // above the note's threshold, which GPU runs set
      expect(cpu.notes.join('\n')).not.toMatch(/MFU/);
    },
  );

  it(
    'refuses a profile measured on another GPU preset than the scenario names, ' + 'and notes one of no preset',
    async () => {
      const path = join(dir, 'h200.json');
      writeProfile(path, syntheticProfile({ backend: 'cuda', device: 'NVIDIA H200', gpuPreset: 'h200-sxm-141gb' }));
      const r = await cli(
        'simulate',
        'scenarios/bert-large-ddp-2node.yaml',
        '--profile',
        path,
        '--set',
        'training.precision=fp32',
      );
      expect(r.code).toBe(2);
      expect(r.err).toMatch(
        new RegExp(
          /measured on NVIDIA H200 \(h200-sxm-141gb\), but the scenario's GPU is a100-sxm4-80gb; /.source +
            /simulate that GPU \(--set cluster.gpu=h200-sxm-141gb\)/.source,
        ),
      );
      const odd = join(dir, 'odd.json');
      writeProfile(odd, syntheticProfile({ backend: 'cuda', device: 'NVIDIA Odd GPU' }));
      const o = await cli(
        'simulate',
        'scenarios/bert-large-ddp-2node.yaml',
        '--profile',
        odd,
        '--set',
        'training.precision=fp32',
        '--alternatives',
        '0',
      );
      expect(o.code).toBe(0);
      expect(o.err).toMatch(
        new RegExp(
          /measured on NVIDIA Odd GPU, which matches no preset; /.source +
            /its constants replace those of the scenario's a100-sxm4-80gb/.source,
        ),
      );
    },
  );

  it('reports a bad profile as bad input', async () => {
    const r = await cli('simulate', 'scenarios/bert-large-ddp-2node.yaml', '--profile', join(dir, 'nope.json'));
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/cannot read profile/);
  });
});

describe('validation output', () => {
  const cases = [
    { name: 'gemm a', kind: 'gemm' as const, predictedS: 1.1e-3, measuredS: 1e-3, errorPct: 10, spreadPct: 2 },
    { name: 'copy b', kind: 'copy' as const, predictedS: 0.95e-3, measuredS: 1e-3, errorPct: -5, spreadPct: 8 },
    { name: 'chain c', kind: 'chain' as const, predictedS: 2e-3, measuredS: 2e-3, errorPct: 0, spreadPct: 4 },
  ];

  it('summarises |error| by median and worst, with the noise', () => {
    const s = summariseCases(cases, { backend: 'cpu', device: 'x' });
    expect(s).toEqual(
      expect.objectContaining({
        cases: 3,
        medianErrorPct: 5,
        worstErrorPct: 10,
        worstCase: 'gemm a',
        medianSpreadPct: 4,
        worstSpreadPct: 8,
      }),
    );
  });

  it('prints predicted, measured and signed error per case, then median and worst', () => {
    const text = formatValidation(
      cases,
      summariseCases(cases, { backend: 'cpu', device: 'x', skipped: [{ name: 'y', reason: 'why' }] }),
    );
    expect(text).toMatch(/gemm a\s+1.10 ms\s+1.00 ms\s+\+10.0%\s+2.0%/);
    expect(text).toMatch(/copy b\s+950.0 µs\s+1.00 ms\s+-5.0%/);
    expect(text).toMatch(/3 cases: median \|error\| 5.0%, worst 10.0% \(gemm a\)/);
    expect(text).toContain('skipped y: why');
  });
});

describe('calibration summary', () => {
  const timing = (threads: number, cpuClock: 'auto' | 'wall') => {
    const p = syntheticProfile();
    p.machine.computeThreads = threads;
    p.machine.cpuClock = cpuClock;
    return (
      formatProfile(p)
        .split('\n')
        .find((l) => l.includes('timing')) ?? ''
    );
  };

  it('names the clock each kind of measurement was timed by, as the backend chose it', () => {
    // It said "each thread's CPU clock, wall clock for copies overlapping compute" whatever the threads: on several
    // threads GEMMs, launches and overlap runs are timed by the wall clock, and on one nothing is.
    expect(timing(2, 'auto')).toContain(
      'wall clock for GEMMs, launches and compute with copies overlapping (they run on 2 threads); ' +
        "each thread's CPU clock for copies and collectives",
    );
    expect(timing(1, 'auto')).toContain("each thread's CPU clock for everything");
    expect(timing(1, 'auto')).not.toContain('wall clock');
    expect(timing(2, 'wall')).toContain('wall clock for everything');
  });
});
