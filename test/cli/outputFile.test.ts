import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeFolders, prepareOutputFile } from '../../src/cli/outputFile.js';
import { writeReportFile } from '../../src/cli/reportFiles.js';
import { UsageError } from '../../src/cli/usageError.js';
import { cli } from '../helpers/cli.js';

describe('output files of long runs are checked before the work starts', () => {
  const dir = mkdtempSync(join(tmpdir(), 'outfile-'));

  it('creates a missing folder, refuses a folder given as the file and a folder that cannot be made', () => {
    prepareOutputFile(join(dir, 'a/b/p.json'), '--out');
    expect(existsSync(join(dir, 'a/b'))).toBe(true);
    expect(() => prepareOutputFile(dir, '--out')).toThrow(UsageError);
    expect(() => prepareOutputFile(dir, '--out')).toThrow(/--out .* is a folder; give a file name in it/);
    writeFileSync(join(dir, 'plain'), 'x');
    expect(() => prepareOutputFile(join(dir, 'plain/p.json'), '--log')).toThrow(
      /--log .*plain\/p\.json: .*plain is a file, not a folder/,
    );
    expect(() => prepareOutputFile(join(dir, 'plain/deeper/p.json'), '--log')).toThrow(
      /cannot create the folder .*plain\/deeper: a part of the path is a file, not a folder \((ENOTDIR|EEXIST)\)/,
    );
  });

  it('makes folders named with .. and . as mkdir -p does, and takes a level another run made first', () => {
    // Built as text: path.join would take the .. away.
    prepareOutputFile(`${dir}/n1/../o1/p.json`, '--out');
    expect(existsSync(join(dir, 'n1'))).toBe(true);
    expect(existsSync(join(dir, 'o1'))).toBe(true);
    prepareOutputFile(`${dir}/n2/./o2/p.json`, '--out');
    expect(existsSync(join(dir, 'n2/o2'))).toBe(true);
    // Already there, as when parts of a sweep start together: no error.
    expect(() => makeFolders(`${dir}/n2/./o2`)).not.toThrow();
  });

  it("refuses a folder under /proc at once (Node's recursive mkdir retried it forever)", () => {
    expect(() => prepareOutputFile('/proc/nope/deeper/p.json', '--out')).toThrow(
      '--out /proc/nope/deeper/p.json: cannot create the folder /proc/nope: ' +
        'no such file, and /proc does not let one be created (ENOENT)',
    );
    expect(() => writeReportFile('/proc/nope/x.svg', 'x', { out: () => {}, err: () => {} })).toThrow(
      /^cannot write '\/proc\/nope\/x\.svg': .*\(ENOENT\)$/,
    );
  });

  it('calibrate and validate stop at once, with exit status 2, on an --out they could not write', async () => {
    const cal = await cli('calibrate', '--backend', 'cpu', '--quick', '--out', dir);
    expect(cal.code).toBe(2);
    expect(cal.err).toMatch(/--out .* is a folder/);
    expect(cal.err).not.toMatch(/calibrate: cpu backend/); // nothing was measured
    writeFileSync(join(dir, 'profile.json'), '{}');
    const val = await cli('check-profile', '--profile', join(dir, 'profile.json'), '--out', join(dir, 'plain/v.json'));
    expect(val.code).toBe(2);
    expect(val.err).toMatch(/plain is a file, not a folder/);
  });

  it('says in words why a report file could not be written, with the system code after them', () => {
    const io = { out: () => {}, err: () => {} };
    const write = (path: string) => () => writeReportFile(path, 'x', io);
    expect(write(dir)).toThrow(`cannot write '${dir}': it is a folder, not a file (EISDIR)`);
    expect(write(join(dir, 'plain/x.svg'))).toThrow(
      `cannot write '${join(dir, 'plain/x.svg')}': a part of the path is a file, not a folder (`,
    );
    expect(write('/proc/x.svg')).toThrow(
      "cannot write '/proc/x.svg': no such file, and /proc does not let one be created (ENOENT)",
    );
  });

  it(
    'simulate --timeline and scale --csv into a folder that takes no files: ' +
      'refused before simulating, in words, exit status 2',
    async () => {
      const r = await cli(
        'simulate',
        'scenarios/bert-large-ddp-2node.yaml',
        '--alternatives',
        '0',
        '--timeline',
        '/proc/x.svg',
      );
      expect(r.code).toBe(2);
      expect(r.out).toBe(''); // no summary: nothing was simulated
      expect(r.err).toBe(
        'clustersim: --timeline /proc/x.svg: cannot write it: ' +
          'no such file, and /proc does not let one be created (ENOENT)\n',
      );
      const s = await cli('scale', 'scenarios/bert-large-ddp-2node.yaml', '--gpus', '8', '--csv', '/proc/x.csv');
      expect(s.code).toBe(2);
      expect(s.out).toBe('');
      expect(s.err).toMatch(/^clustersim: --csv \/proc\/x\.csv: cannot write it: /);
    },
  );

  it('leaves no file behind from the check, and leaves an existing file as it was', () => {
    const fresh = join(dir, 'fresh.svg');
    prepareOutputFile(fresh, '--timeline');
    expect(existsSync(fresh)).toBe(false);
    const kept = join(dir, 'kept.svg');
    writeFileSync(kept, 'old');
    prepareOutputFile(kept, '--timeline');
    expect(readFileSync(kept, 'utf8')).toBe('old');
  });

  it(
    'opens nothing but a regular file early: ' +
      'a FIFO is not opened (a reader would take the test for the output), a link is left a link',
    () => {
      const fifo = join(dir, 'pipe');
      execFileSync('mkfifo', [fifo]);
      prepareOutputFile(fifo, '--memory-chart'); // returns at once: opening a FIFO with no reader would block
      expect(lstatSync(fifo).isFIFO()).toBe(true);
      const link = join(dir, 'link.svg');
      symlinkSync(join(dir, 'target.svg'), link);
      prepareOutputFile(link, '--timeline');
      expect(lstatSync(link).isSymbolicLink()).toBe(true);
      expect(existsSync(join(dir, 'target.svg'))).toBe(false);
    },
  );

  it('simulate refuses a bad --alternatives before simulating', async () => {
    const r = await cli('simulate', 'scenarios/bert-large-ddp-2node.yaml', '--alternatives', 'x');
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toMatch(/--alternatives: expected a whole number ≥ 0, got 'x'/);
  });

  it(
    'refuses an output that is a file the run reads, ' + 'or that another output names, and leaves them as they were',
    async () => {
      const scenario = join(dir, 'mine.yaml');
      const text = readFileSync('scenarios/bert-large-ddp-2node.yaml', 'utf8');
      writeFileSync(scenario, text);
      const own = await cli('simulate', scenario, '--alternatives', '0', '--timeline', `${dir}/./mine.yaml`);
      expect(own.code).toBe(2);
      expect(own.out).toBe('');
      expect(own.err).toMatch(
        new RegExp(
          /--timeline .*mine\.yaml is a scenario file, which this run reads: /.source +
            /writing it would destroy it; give --timeline another file name/.source,
        ),
      );
      expect(readFileSync(scenario, 'utf8')).toBe(text);
      const ds = await cli(
        'simulate',
        'scenarios/imports/llama2-7b-a100-1node.yaml',
        '--deepspeed-config',
        'scenarios/imports/ds_config.json',
        '--trace',
        'scenarios/imports/ds_config.json',
      );
      expect(ds.err).toMatch(
        /--trace scenarios\/imports\/ds_config\.json is the --deepspeed-config file, which this run reads/,
      );
      const twice = await cli(
        'simulate',
        scenario,
        '--alternatives',
        '0',
        '--timeline',
        join(dir, 't.svg'),
        '--trace',
        join(dir, 't.svg'),
      );
      expect(twice.code).toBe(2);
      expect(twice.err).toMatch(
        /--timeline .*t\.svg and --trace .*t\.svg are the same file: the second written would replace the first/,
      );
      const csv = await cli('scale', scenario, '--gpus', '8,16', '--csv', scenario);
      expect(csv.code).toBe(2);
      expect(csv.err).toMatch(/--csv .*mine\.yaml is a scenario file, which this run reads/);
      const part = join(dir, 'part.jsonl');
      writeFileSync(part, '');
      const merged = await cli('merge', part, '--svg', part);
      expect(merged.err).toMatch(/--svg .*part\.jsonl is a part, which this run reads/);
      expect(readFileSync(scenario, 'utf8')).toBe(text);
      // Files the scenario names are read too: its Hugging Face config (looked up from the scenario's folder).
      const config = readFileSync('scenarios/models/llama2-7b.config.json', 'utf8');
      writeFileSync(join(dir, 'config.json'), config);
      const withConfig = join(dir, 'hf.yaml');
      writeFileSync(
        withConfig,
        'cluster: { preset: dgx-a100-80gb }\n' +
          'model: { hfConfig: config.json, layers: 2 }\n' +
          'training: { globalBatch: 8, seqLen: 512 }\n',
      );
      const hf = await cli('simulate', withConfig, '--alternatives', '0', '--trace', join(dir, 'config.json'));
      expect(hf.code).toBe(2);
      expect(hf.err).toMatch(/--trace .*config\.json is the file model\.hfConfig names, which this run reads/);
      const hfScale = await cli('scale', withConfig, '--gpus', '8', '--svg', join(dir, 'config.json'));
      expect(hfScale.err).toMatch(/--svg .*config\.json is the file model\.hfConfig names, which this run reads/);
      expect(readFileSync(join(dir, 'config.json'), 'utf8')).toBe(config);
      // Devices take any number of outputs.
      expect(
        (await cli('simulate', scenario, '--alternatives', '0', '--memory-chart', '/dev/null', '--trace', '/dev/null'))
          .code,
      ).toBe(0);
    },
  );
});
