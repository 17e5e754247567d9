import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli.js';

const BERT = 'scenarios/bert-large-ddp-2node.yaml';

describe('clustersim scale --shard, --out and --jobs', () => {
  it('prints a part as JSON lines on stdout, one per point, in point order', async () => {
    const r = await cli('scale', BERT, '--gpus', '4,8,16', '--shard', '1/2');
    expect(r.code).toBe(0);
    const records = r.out
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(records.map((x) => [x.point, x.gpus, x.shard])).toEqual([
      [0, 4, '1/2'],
      [2, 16, '1/2'],
    ]);
    // Rows before speedup and efficiency: those need the whole series, so merge computes them.
    expect(records[0].row.speedup).toBeUndefined();
    expect(r.err).toBe('');
  });

  it('writes the lines to --out, and says so on stderr', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'clustersim-shard-')), 'deep', 'part-2.jsonl');
    const r = await cli('scale', BERT, '--gpus', '4,8,16', '--shard', '2/2', '--out', file);
    expect(r.code).toBe(0);
    expect(r.out).toBe('');
    expect(r.err).toContain(`wrote ${file}`);
    expect(
      readFileSync(file, 'utf8')
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l).gpus),
    ).toEqual([8]);
  });

  it('runs a part with no points (more parts than points) and says so', async () => {
    const r = await cli('scale', BERT, '--gpus', '8', '--shard', '3/4');
    expect(r.code).toBe(0);
    expect(r.out).toBe('');
    expect(r.err).toContain('part 3/4 holds no points (the sweep has 1)');
  });

  it.each([
    ['0/4', "--shard: '0/4': parts count from 1 (1/4 … 4/4)"],
    ['5/4', "--shard: '5/4': part 5 does not exist, there are only 4"],
    ['3/0', "--shard: '3/0': N, the number of parts, must be at least 1"],
    ['garbage', "--shard: 'garbage' is not i/N; write the part and the number of parts, e.g. 2/8"],
    ['1/2/3', "--shard: '1/2/3' is not i/N"],
  ])('rejects --shard %s with exit code 2 and says what is expected', async (value, message) => {
    const r = await cli('scale', BERT, '--gpus', '8', '--shard', value);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toContain(`clustersim: ${message}`);
  });

  it('rejects outputs of a whole sweep with --shard, and --out without it (exit 2)', async () => {
    const a = await cli('scale', BERT, '--gpus', '8', '--shard', '1/2', '--json', '--csv', 'x.csv');
    expect(a.code).toBe(2);
    expect(a.err).toContain(
      '--json, --csv: a part (--shard) writes JSON lines only; give --json, --csv to clustersim merge',
    );
    // merge has no --report, so the advice must not send the user there.
    const r = await cli('scale', BERT, '--gpus', '8', '--shard', '1/2', '--report', 'r.html');
    expect(r.code).toBe(2);
    expect(r.err).toContain(
      '--report: a part (--shard) writes JSON lines only, and merge writes tables and the chart (--json, ' +
        '--csv, --svg), not the HTML report; run the sweep without --shard for it',
    );
    expect((await cli('merge', '--report', 'r.html', 'x.jsonl')).err).toMatch(/unknown option '--report'/);
    const b = await cli('scale', BERT, '--gpus', '8', '--out', 'x.jsonl');
    expect(b.code).toBe(2);
    expect(b.err).toContain('--out: only with --shard');
  });

  it.each(['0', '-1', 'two', '1.5'])('rejects --jobs %s with exit code 2', async (value) => {
    const r = await cli('scale', BERT, '--gpus', '8', '--jobs', value);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`clustersim: --jobs: '${value}' is not a number of threads`);
  });

  it('checks every --compare scenario before simulating anything', async () => {
    const r = await cli('scale', BERT, '--compare', 'scenarios/nope.yaml', '--gpus', '8');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/cannot read scenario file 'scenarios\/nope\.yaml'/);
  });
});
