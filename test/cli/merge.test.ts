import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli.js';

const BERT = 'scenarios/bert-large-ddp-2node.yaml';
const TP8 = 'scenarios/llama2-13b-tp8-nvswitch.yaml';
// Two scenarios (one with tp 8, so 4 GPUs is infeasible for it) and an infeasible size (12): 10 points.
const SWEEP = [BERT, '--compare', TP8, '--gpus', '4,8,12,16,32', '--mode', 'weak'];

const dir = mkdtempSync(join(tmpdir(), 'clustersim-merge-'));
const path = (f: string) => join(dir, f);
const lines = (f: string) => readFileSync(path(f), 'utf8').trimEnd().split('\n');

let whole: { json: string; table: string; csv: string };

beforeAll(async () => {
  const json = await cli('scale', ...SWEEP, '--json', '--csv', path('whole.csv'));
  const table = await cli('scale', ...SWEEP);
  expect(json.code).toBe(0);
  expect(table.code).toBe(0);
  whole = { json: json.out, table: table.out, csv: readFileSync(path('whole.csv'), 'utf8') };
  // Three parts of ten points (4, 3 and 3), and a part of a sweep that differs only in its mode.
  for (const i of [1, 2, 3])
    expect((await cli('scale', ...SWEEP, '--shard', `${i}/3`, '--out', path(`part-${i}.jsonl`))).code).toBe(0);
  const other = await cli(
    'scale',
    BERT,
    '--compare',
    TP8,
    '--gpus',
    '4,8,12,16,32',
    '--mode',
    'strong',
    '--shard',
    '1/3',
    '--out',
    path('strong-1.jsonl'),
  );
  expect(other.code).toBe(0);
}, 180_000);

describe('clustersim merge', () => {
  it('writes one JSON line per point of the part, with the scenario, mode, GPU count and row', () => {
    const part = lines('part-2.jsonl').map((l) => JSON.parse(l));
    expect(part.map((r) => r.point)).toEqual([1, 4, 7]);
    expect(part[0]).toMatchObject({
      format: 'clustersim-scale-point/1',
      shard: '2/3',
      mode: 'weak',
      series: 0,
      source: BERT,
      name: 'bert-large-ddp-2node',
      gpus: 8,
      row: { gpus: 8, status: 'ok' },
    });
    expect(part[2]).toMatchObject({
      series: 1,
      source: TP8,
      name: 'llama2-13b-tp8-nvswitch',
      tp: 8,
      pp: 1,
      gpus: 12,
      row: { status: 'infeasible' },
    });
    expect(part[0].scenarios).toEqual([BERT, TP8]);
    expect(part[0].gpuCounts).toEqual([4, 8, 12, 16, 32]);
    expect(new Set([1, 2, 3].flatMap((i) => lines(`part-${i}.jsonl`).map((l) => JSON.parse(l).sweep))).size).toBe(1);
  });

  it('joins the parts, in any order, into exactly the unsharded output: JSON, table and CSV', async () => {
    const json = await cli(
      'merge',
      path('part-3.jsonl'),
      path('part-1.jsonl'),
      path('part-2.jsonl'),
      '--json',
      '--csv',
      path('merged.csv'),
    );
    expect(json.code).toBe(0);
    expect(json.out).toBe(whole.json);
    expect(readFileSync(path('merged.csv'), 'utf8')).toBe(whole.csv);
    const table = await cli('merge', path('part-1.jsonl'), path('part-2.jsonl'), path('part-3.jsonl'));
    expect(table.code).toBe(0);
    expect(table.out).toBe(whole.table);
  });

  it('writes the same scaling chart as the unsharded run', async () => {
    expect((await cli('scale', BERT, '--gpus', '8,16', '--svg', path('whole.svg'))).code).toBe(0);
    for (const i of [1, 2])
      expect(
        (await cli('scale', BERT, '--gpus', '8,16', '--shard', `${i}/2`, '--out', path(`svg-${i}.jsonl`))).code,
      ).toBe(0);
    expect((await cli('merge', path('svg-1.jsonl'), path('svg-2.jsonl'), '--svg', path('merged.svg'))).code).toBe(0);
    expect(readFileSync(path('merged.svg'), 'utf8')).toBe(readFileSync(path('whole.svg'), 'utf8'));
  });

  it(
    'keeps a context-parallel split: ' + 'the parts carry cp and the merged table says tp × cp × pp, as unsharded',
    async () => {
      const CP = ['scenarios/checks/dgxc-llama31-8b-cp2.yaml', '--gpus', '8,16'];
      const whole = await cli('scale', ...CP);
      for (const i of [1, 2])
        expect((await cli('scale', ...CP, '--shard', `${i}/2`, '--out', path(`cp-${i}.jsonl`))).code).toBe(0);
      expect(JSON.parse(lines('cp-1.jsonl')[0])).toMatchObject({ tp: 1, pp: 1, cp: 2 });
      const merged = await cli('merge', path('cp-1.jsonl'), path('cp-2.jsonl'));
      expect(merged.code).toBe(0);
      expect(merged.out).toContain('tp 1 × cp 2 × pp 1 fixed, dp grows');
      expect(merged.out).toBe(whole.out);
      const json = await cli('merge', path('cp-1.jsonl'), path('cp-2.jsonl'), '--json');
      expect(JSON.parse(json.out).series[0].cp).toBe(2);
      // A part whose cp was changed no longer matches its series.
      writeFileSync(
        path('cp-bad.jsonl'),
        lines('cp-2.jsonl')
          .map((l) => JSON.stringify({ ...JSON.parse(l), cp: 4 }))
          .join('\n'),
      );
      const bad = await cli('merge', path('cp-1.jsonl'), path('cp-bad.jsonl'));
      expect(bad.code).toBe(2);
      expect(bad.err).toContain('with tp 1 × cp 4 × pp 1, cpCommType p2p, but');
      writeFileSync(
        path('cp-one.jsonl'),
        lines('cp-2.jsonl')
          .map((l) => JSON.stringify({ ...JSON.parse(l), cp: 1 }))
          .join('\n'),
      );
      expect((await cli('merge', path('cp-1.jsonl'), path('cp-one.jsonl'))).err).toContain(
        "'cp' is 1; expected a whole number of at least 2",
      );
    },
  );

  it('accepts blank lines and the empty output of a part that got no points', async () => {
    writeFileSync(path('empty.jsonl'), '');
    writeFileSync(path('spaced.jsonl'), `\n${readFileSync(path('part-1.jsonl'), 'utf8')}\n\n`);
    const r = await cli(
      'merge',
      path('spaced.jsonl'),
      path('empty.jsonl'),
      path('part-2.jsonl'),
      path('part-3.jsonl'),
      '--json',
    );
    expect(r.code).toBe(0);
    expect(r.out).toBe(whole.json);
  });

  it('names the points that are missing and the part that should hold them (exit 2)', async () => {
    const r = await cli('merge', path('part-1.jsonl'), path('part-3.jsonl'));
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toContain(
      `clustersim: missing 3 of 10 points of the sweep: point 2 (${BERT} at 8 GPUs), part 2/3; ` +
        `point 5 (${BERT} at 32 GPUs), part 2/3; point 8 (${TP8} at 12 GPUs), part 2/3`,
    );
  });

  it('names a point that is cut short from a part (exit 2)', async () => {
    writeFileSync(path('short-3.jsonl'), `${lines('part-3.jsonl').slice(0, 2).join('\n')}\n`);
    const r = await cli('merge', path('part-1.jsonl'), path('part-2.jsonl'), path('short-3.jsonl'));
    expect(r.code).toBe(2);
    expect(r.err).toContain(`missing 1 of 10 points of the sweep: point 9 (${TP8} at 16 GPUs), part 3/3`);
  });

  it('refuses a point given twice, naming both places (exit 2)', async () => {
    writeFileSync(path('dup.jsonl'), `${lines('part-3.jsonl')[1]}\n`);
    const r = await cli('merge', path('part-1.jsonl'), path('part-2.jsonl'), path('part-3.jsonl'), path('dup.jsonl'));
    expect(r.code).toBe(2);
    expect(r.err).toContain(
      `${path('dup.jsonl')} line 1: point 6 (${TP8} at 4 GPUs) is already in ${path('part-3.jsonl')} line 2; ` +
        `every point must come from exactly one part`,
    );
    const twice = await cli(
      'merge',
      path('part-1.jsonl'),
      path('part-2.jsonl'),
      path('part-3.jsonl'),
      path('part-2.jsonl'),
    );
    expect(twice.code).toBe(2);
    expect(twice.err).toContain('(was a part given twice?)');
  });

  it('refuses parts cut with different numbers of parts, naming both (exit 2)', async () => {
    expect((await cli('scale', ...SWEEP, '--shard', '1/2', '--out', path('half-1.jsonl'))).code).toBe(0);
    const r = await cli('merge', path('half-1.jsonl'), path('part-2.jsonl'), path('part-3.jsonl'));
    expect(r.code).toBe(2);
    expect(r.err).toContain(
      `${path('part-2.jsonl')} line 1: a part of 3 (--shard 2/3), but ${path('half-1.jsonl')} ` +
        `line 1 is a part of 2 (--shard 1/2); run every part with the same N in --shard i/N`,
    );
  });

  it('refuses parts of different sweeps, saying how they differ (exit 2)', async () => {
    const r = await cli('merge', path('part-2.jsonl'), path('part-3.jsonl'), path('strong-1.jsonl'));
    expect(r.code).toBe(2);
    expect(r.err).toContain(
      `${path('strong-1.jsonl')} line 1: belongs to a different sweep ` +
        `than ${path('part-2.jsonl')} line 1: strong scaling, the other weak`,
    );
    // Same files, mode and GPU counts, but another --set: only the fingerprint tells them apart.
    expect(
      (await cli('scale', ...SWEEP, '--set', 'seed=7', '--shard', '1/3', '--out', path('seed7-1.jsonl'))).code,
    ).toBe(0);
    const s = await cli('merge', path('seed7-1.jsonl'), path('part-2.jsonl'), path('part-3.jsonl'));
    expect(s.code).toBe(2);
    expect(s.err).toMatch(
      new RegExp(
        /part-2\.jsonl line 1: belongs to a different sweep than .*seed7-1\.jsonl line 1: /.source +
          /same files, mode and GPU counts, but the scenario contents or --set overrides differ/.source,
      ),
    );
  });

  it('refuses a malformed line, naming the file and line (exit 2)', async () => {
    const good = lines('part-1.jsonl');
    const cases: [string, RegExp][] = [
      [`${good[0]}\n{"point": 3\n`, /bad\.jsonl line 2: not valid JSON/],
      [
        `${good[0]}\n{"hello": "world"}\n`,
        new RegExp(
          /bad\.jsonl line 2: not a point of a clustersim scale sweep \(expected "format": /.source +
            /"clustersim-scale-point\/1", found an object without "format"\)/.source,
        ),
      ],
      ['[1, 2]\n', /bad\.jsonl line 1: not a point of a clustersim scale sweep .*found a list/],
      [
        `${good[0].replace('"gpus":4,"row"', '"gpus":64,"row"')}\n`,
        /bad\.jsonl line 1: 'gpus' is 64; expected 4 for point 1/,
      ],
      [
        `${good[0].replace('"status":"ok"', '"status":"fine"')}\n`,
        /bad\.jsonl line 1: 'row\.status' is "fine"; expected 'ok', 'oom' or 'infeasible'/,
      ],
      [
        `${good[0].replace('"point":0', '"point":99')}\n`,
        /bad\.jsonl line 1: 'point' is 99; expected a point index from 0 to 9/,
      ],
      [
        `${good[0].replace(/"samplesPerS":[^,]+/, '"samplesPerS":"fast"')}\n`,
        /bad\.jsonl line 1: 'row\.samplesPerS' is "fast"; expected a finite rate above 0 in a row of status 'ok'/,
      ],
      [
        `${good[0].replace('"gpu":"ampere"', '"gpu":"tpu"')}\n`,
        /bad\.jsonl line 1: 'row\.kind' has gpu "tpu"; expected volta \| ampere \| hopper \| other/,
      ],
    ];
    for (const [text, message] of cases) {
      writeFileSync(path('bad.jsonl'), text);
      const r = await cli('merge', path('bad.jsonl'), path('part-2.jsonl'), path('part-3.jsonl'));
      expect(r.code, text).toBe(2);
      expect(r.err).toMatch(message);
      expect(r.err).not.toMatch(/internal error|at .*\.ts:\d+/);
    }
  });

  it('refuses parts that hold no points at all, and files that cannot be read (exit 2)', async () => {
    const empty = await cli('merge', path('empty.jsonl'));
    expect(empty.code).toBe(2);
    expect(empty.err).toContain('every part is empty');
    const none = await cli('merge', path('nope.jsonl'));
    expect(none.code).toBe(2);
    expect(none.err).toContain(`cannot read part '${path('nope.jsonl')}': no such file`);
  });
});
