import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync, spawn } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { cli, expectBadInput } from '../helpers/badInput.js';
import { BUILT_BIN, buildCli, builtModuleUrl } from './builtCli.js';
import { writeFileAtomic } from '../../src/atomicWrite.js';
import { readInputText, MAX_INPUT_FILE_BYTES } from '../../src/inputFile.js';
import { boundedMessage } from '../../src/cli/messageBounds.js';
import { writeProfile, ProfileError } from '../../src/calibrate/profile.js';

// Issue 26, items 1-5, 7, 8 and 10: each test failed before the change it names.
const BERT = 'scenarios/bert-large-ddp-2node.yaml';
const dir = mkdtempSync(join(tmpdir(), 'clustersim-hard-edges-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string): string => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

describe('YAML aliases are bad input, not internal errors (item 1)', () => {
  it('refuses an alias bomb', async () => {
    const rows = [
      'a: &a [1, 2]',
      'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]',
      'c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]',
      'd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]',
      'e: [*d, *d, *d, *d, *d, *d, *d, *d, *d]',
    ];
    expectBadInput(
      await cli('simulate', file('bomb.yaml', `${rows.join('\n')}\n`)),
      'aliases expand to too many copies',
    );
  });

  it('refuses an alias that names no anchor, in a scenario, a --set value and a Hugging Face config', async () => {
    expectBadInput(
      await cli('simulate', file('undefined-alias.yaml', 'name: *nope\n')),
      'the alias *nope names no anchor',
    );
    expectBadInput(
      await cli('simulate', BERT, '--set', 'parallel.tp=*x'),
      "--set 'parallel.tp=*x'",
      'the alias *x names no anchor',
    );
    const hf = file('hf-alias.json', '{"model_type": "llama", "hidden_size": *a}');
    const scenario = file(
      'hf.yaml',
      `cluster: { preset: dgx-h100 }\nmodel: { hfConfig: ${hf} }\ntraining: { globalBatch: 8, microBatch: 1 }\n`,
    );
    expectBadInput(await cli('simulate', scenario), 'model.hfConfig', 'the alias *a names no anchor');
  });

  it('still expands an alias that has its anchor', async () => {
    const same = file(
      'alias-ok.yaml',
      `name: x\n` +
        `cluster: { preset: dgx-a100-80gb, nodes: &n 1 }\n` +
        `model: { preset: gpt3-1.3b, layers: 4 }\n` +
        `training: { globalBatch: &b 8, microBatch: 1 }\n`,
    );
    const r = await cli('simulate', same, '--json', '--alternatives', '0');
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).gpus).toBe(8);
  });
});

describe('--set paths cannot reach the machinery of JavaScript objects (item 2)', () => {
  for (const path of [
    '__proto__.polluted',
    '__proto__.hasOwnProperty',
    'constructor.prototype.x',
    'model.__proto__.x',
    'prototype',
  ]) {
    it(`refuses --set ${path}=1 and leaves Object.prototype alone`, async () => {
      expectBadInput(await cli('simulate', BERT, '--set', `${path}=1`), 'is not a scenario field');
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect(typeof Object.prototype.hasOwnProperty).toBe('function');
    });
  }
});

describe('hardware and profile values outside any real range are refused (item 3)', () => {
  it('refuses NVLink of no bandwidth on an NVLink node, which made communication free', async () => {
    expectBadInput(
      await cli('simulate', BERT, '--set', 'cluster.node.nvlinkBandwidthGBps=0'),
      'cluster.node.nvlinkBandwidthGBps: is 0',
      'intra: pcie',
    );
  });

  it('keeps 0 NVLink bandwidth for a PCIe node', async () => {
    const r = await cli('simulate', 'scenarios/llama2-13b-tp8-pcie.yaml', '--json', '--alternatives', '0');
    expect(r.code, r.stderr).toBe(0);
  });

  for (const [set, field] of [
    ['cluster.gpu={preset: a100-sxm4-80gb, peakTflops: {bf16: 1e-300}}', 'cluster.gpu.peakTflops.bf16'],
    ['cluster.gpu={preset: a100-sxm4-80gb, hbmBandwidthGBps: 1e-300}', 'cluster.gpu.hbmBandwidthGBps'],
    ['cluster.network.linkGbps=1e-300', 'cluster.network.linkGbps'],
    ['cluster.node.pcieLatencyNs=1e300', 'cluster.node.pcieLatencyNs'],
    ['cluster.gpu={preset: a100-sxm4-80gb, kernelLaunchNs: 1e300}', 'cluster.gpu.kernelLaunchNs'],
  ]) {
    it(`refuses ${set}`, async () => {
      const r = await cli('simulate', BERT, '--set', set);
      expectBadInput(r, `${field}: expected a number ≥`);
      expect(r.stderr).not.toMatch(/Infinity|NaN|null/);
    });
  }

  it('refuses a hand-edited profile whose launch time is 1e300 s', async () => {
    const profile = JSON.parse(readFileSync('reports/calibration/cpu/profile.json', 'utf8')) as {
      fit: { launchS: number };
    };
    profile.fit.launchS = 1e300;
    expectBadInput(
      await cli('simulate', BERT, '--profile', file('bad-profile.json', JSON.stringify(profile))),
      'fit.launchS',
    );
  });
});

describe('merge checks a part as strictly as a scenario (item 4)', () => {
  let lines: Record<string, unknown>[] = [];
  const part = async (): Promise<Record<string, unknown>[]> => {
    if (lines.length === 0) {
      const out = join(dir, 'part.jsonl');
      const r = await cli('scale', BERT, '--gpus', '8,16', '--shard', '1/1', '--out', out);
      expect(r.code, r.stderr).toBe(0);
      lines = readFileSync(out, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    }
    return structuredClone(lines);
  };
  const write = (name: string, records: Record<string, unknown>[]): string =>
    file(
      name,
      records
        .map((r) => JSON.stringify(r))
        .join('\n')
        .replace('"INFINITY"', '1e309') + '\n',
    );

  for (const [name, value, words] of [
    ['negative', -1, "'row.stepTimeS' is -1"],
    ['missing', undefined, "'row.stepTimeS' is missing"],
    ['null', null, "'row.stepTimeS' is null"],
    ['infinite', 'INFINITY', "'row.stepTimeS' is Infinity"],
  ] as const) {
    it(`refuses a row whose step time is ${name}`, async () => {
      const records = await part();
      (records[0].row as Record<string, unknown>).stepTimeS = value;
      expectBadInput(
        await cli('merge', write(`${name}.jsonl`, records)),
        words,
        'expected a finite number of seconds above 0',
      );
    });
  }

  it('refuses a header declaring 30,000 × 30,000 points before making room for them', async () => {
    const records = await part();
    records[0].scenarios = Array.from({ length: 30_000 }, () => 'x.yaml');
    records[0].gpuCounts = Array.from({ length: 30_000 }, (_, i) => i + 1);
    expectBadInput(
      await cli('merge', write('huge.jsonl', records.slice(0, 1))),
      '900000000 points, more than the 100000',
    );
  });

  it('still joins the parts as written', async () => {
    const r = await cli('merge', write('good.jsonl', await part()));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('bert');
  });
});

describe('input files are bounded reads of regular files (item 5)', () => {
  it('refuses a device, a FIFO and a folder without reading them', async () => {
    expectBadInput(await cli('simulate', '/dev/zero'), "'/dev/zero': it is a device, not a regular file");
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    expectBadInput(await cli('simulate', BERT, '--deepspeed-config', fifo), 'it is a pipe (FIFO), not a regular file');
    expectBadInput(await cli('simulate', BERT, '--megatron-args', `@${fifo}`), 'it is a pipe (FIFO)');
    expectBadInput(await cli('merge', '/dev/zero'), "cannot read part '/dev/zero': it is a device");
    expectBadInput(await cli('simulate', BERT, '--profile', '/dev/zero'), 'it is a device');
  });

  it('refuses a file over the size limit, naming the limit', () => {
    const big = join(dir, 'big.txt');
    writeFileSync(big, 'x'.repeat(2048));
    expect(readInputText(big, 2048)).toHaveLength(2048);
    expect(() => readInputText(big, 1024)).toThrow(/at most 0\.0 MiB|at most 1\.0 KiB|may hold at most/);
    expect(MAX_INPUT_FILE_BYTES).toBe(64 * 1024 * 1024);
  });
});

describe('error messages are bounded whatever they echo (item 7)', () => {
  it('cuts a 10 MB one-line scenario to a message of a few hundred characters', async () => {
    const r = await cli('simulate', file('one-line.yaml', 'a'.repeat(10_000_000)));
    expect(r.code).toBe(2);
    expect(r.stderr.length).toBeLessThan(1000);
    expect(r.stderr).toContain('more characters]');
  });

  it('keeps short words and lines whole, and counts what it leaves out', () => {
    expect(boundedMessage('cluster.gpu: unknown field')).toBe('cluster.gpu: unknown field');
    const cut = boundedMessage(`x ${'b'.repeat(500)} y`);
    expect(cut).toBe(`x ${'b'.repeat(60)}…[440 more characters] y`);
    const many = boundedMessage(Array.from({ length: 100 }, (_, i) => `line ${i}`).join('\n'));
    expect(many.split('\n')).toHaveLength(61);
    expect(many.endsWith('…[40 more lines]')).toBe(true);
  });
});

describe('a failed output write is a user error (item 8)', () => {
  it('says the profile could not be written to a full device, and that the log keeps the measurements', () => {
    const profile = JSON.parse(readFileSync('reports/calibration/cpu/profile.json', 'utf8'));
    expect(() => writeProfile('/dev/full', profile)).toThrow(ProfileError);
    expect(() => writeProfile('/dev/full', profile)).toThrow(/no space left on the device \(ENOSPC\).*--resume/);
  });

  it('says a report could not be written to a full device, with exit code 2', async () => {
    // The step is printed first; the file written after it cannot be.
    const r = await cli('simulate', BERT, '--timeline', '/dev/full', '--alternatives', '0');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("cannot write '/dev/full': no space left on the device (ENOSPC)");
    expect(r.stderr).not.toContain('internal error');
  });
});

describe('outputs are replaced whole or not at all (item 10)', () => {
  it('leaves no temporary file beside what it wrote, and keeps a link a link', () => {
    const out = join(dir, 'atomic');
    mkdirSync(out);
    writeFileAtomic(join(out, 'a.txt'), 'one');
    writeFileAtomic(join(out, 'a.txt'), 'two');
    expect(readFileSync(join(out, 'a.txt'), 'utf8')).toBe('two');
    expect(readdirSync(out)).toEqual(['a.txt']);
    execFileSync('ln', ['-s', 'a.txt', join(out, 'link.txt')]);
    writeFileAtomic(join(out, 'link.txt'), 'three');
    expect(readFileSync(join(out, 'a.txt'), 'utf8')).toBe('three');
    expect(readdirSync(out).sort()).toEqual(['a.txt', 'link.txt']);
  });

  it('writes a device directly, which cannot be replaced', () => {
    writeFileAtomic('/dev/null', 'gone');
    expect(statSync('/dev/null').isCharacterDevice()).toBe(true);
  });

  it('never leaves a part-written file when the writer is killed mid-write', async () => {
    await buildCli();
    const target = join(dir, 'killed.txt');
    // Two-byte characters make encoding the text slow enough that a plain write (open, truncate, encode, write) is
    // killed with the file empty or part-written about half the time: checked by hand with writeFileSync.
    const chars = 64 * 1024 * 1024;
    const [a, b] = ['é'.repeat(chars), 'ü'.repeat(chars)];
    writeFileSync(target, a);
    const script =
      `import(${JSON.stringify(builtModuleUrl('atomicWrite.js'))}).then(({ writeFileAtomic }) => { ` +
      `const t = ['é'.repeat(${chars}), 'ü'.repeat(${chars})]; ` +
      `for (let i = 0; ; i++) writeFileAtomic(${JSON.stringify(target)}, t[i % 2]); });`;
    for (const delayMs of [300, 700, 1100, 1500]) {
      const child = spawn(process.execPath, ['-e', script], { stdio: 'ignore' });
      await new Promise((r) => setTimeout(r, delayMs));
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
      const text = readFileSync(target, 'utf8');
      expect(text.length).toBe(chars);
      expect(text === a || text === b).toBe(true);
    }
  }, 60_000);
});

describe('link latencies say they are ignored (item 12)', () => {
  it('warns of each link latency given, and the step is the same with them at 0', async () => {
    const base = await cli('simulate', BERT, '--json', '--alternatives', '0');
    const zero = await cli(
      'simulate',
      BERT,
      '--json',
      '--alternatives',
      '0',
      '--set',
      'cluster.node.nvlinkLatencyNs=0',
      '--set',
      'cluster.node.pcieLatencyNs=0',
      '--set',
      'cluster.network.linkLatencyNs=0',
    );
    expect(zero.code, zero.stderr).toBe(0);
    for (const field of ['node.nvlinkLatencyNs', 'node.pcieLatencyNs', 'network.linkLatencyNs'])
      expect(zero.stderr).toContain(`cluster.${field}: ignored, link latencies time nothing`);
    const step = (r: { stdout: string }) => (JSON.parse(r.stdout) as { stepTimeS: number }).stepTimeS;
    expect(step(zero)).toBe(step(base));
    expect(base.stderr).not.toContain('link latencies');
  });
});

describe('collective --compare is checked as comm.measured is (items 9 and 17)', () => {
  const shipped = 'scenarios/measured/all_reduce_perf-a100-8gpu.csv';

  it('ships the table the README and --help compare against, and it compares', async () => {
    const r = await cli('collective', '--cluster', 'dgx-a100-80gb', '--gpus', '8', '--compare', shipped, '--json');
    expect(r.code, r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as { rows: unknown[] }).rows).toHaveLength(1024);
  });

  it('refuses a table of µs labelled ns, which made a 164,415% error', async () => {
    // The same table with its times divided by 1,000: µs under a time(ns) heading.
    const lines = readFileSync(shipped, 'utf8')
      .split('\n')
      .map((l) => {
        if (!/^\d/.test(l)) return l;
        const cells = l.split(',');
        for (const c of [3, 5]) cells[c] = String(Math.round(Number(cells[c]) / 1000));
        return cells.join(',');
      });
    const r = await cli(
      'collective',
      '--cluster',
      'dgx-a100-80gb',
      '--gpus',
      '8',
      '--compare',
      file('us-as-ns.csv', lines.join('\n')),
    );
    expectBadInput(r, 'of bus bandwidth, more than', 'are the times in µs but labelled ns?');
  });
});

describe('the summary fits a terminal (item 17)', () => {
  for (const scenario of [
    'scenarios/bert-large-ddp-2node.yaml',
    'scenarios/llama2-70b-tp8-scale.yaml',
    'scenarios/llama2-13b-tp8-pcie.yaml',
  ]) {
    it(`prints no line wider than 114 characters for ${scenario}`, async () => {
      const r = await cli('simulate', scenario);
      expect(r.code, r.stderr).toBe(0);
      const wide = r.stdout.split('\n').filter((l) => [...l].length > 114);
      expect(wide).toEqual([]);
    }, 60_000);
  }
});

describe('check-published (npm run validate) shows progress in a log (item 17)', () => {
  it('prints plain progress lines on stderr when stderr is not a terminal', async () => {
    await buildCli();
    const run = spawn(process.execPath, [BUILT_BIN, 'check-published', '--limit', '2'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    run.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise((r) => run.once('exit', r));
    expect(code).toBe(0);
    expect(stderr).toMatch(/^check-published: 1\/4 runs done in \d+ s \(last: row \d\)$/m);
    expect(stderr).toMatch(/^check-published: 4\/4 runs done/m);
  }, 120_000);
});

describe('keys named like the machinery of objects are plain unknown fields in imports (item 9)', () => {
  it('warns of a DeepSpeed "__proto__" key by its name, not as [object Object]', async () => {
    const ds = file(
      'proto-ds.json',
      '{"train_batch_size": 16, "__proto__": {"x": 1}, "zero_optimization": {"stage": 2}}',
    );
    const r = await cli(
      'simulate',
      'scenarios/llama2-70b-zero2-8xa100.yaml',
      '--deepspeed-config',
      ds,
      '--alternatives',
      '0',
    );
    expect(r.stderr).toContain('unknown DeepSpeed fields, ignored: __proto__');
    expect(r.stderr).not.toContain('[object Object]');
  });

  it('refuses --cp-comm-type constructor, which an inherited member let through', async () => {
    expectBadInput(
      await cli('simulate', 'scenarios/gpt3-175b-1024xa100.yaml', '--megatron-args', '--cp-comm-type constructor'),
      "--cp-comm-type has 'constructor'",
    );
  });
});
