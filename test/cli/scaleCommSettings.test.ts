import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'clustersim-scale-comm-'));
const path = (f: string) => join(dir, f);
const CP = 'scenarios/checks/dgxc-llama31-8b-cp2.yaml';
// BERT-Large at tp 2 with sequence parallelism and Transformer Engine's TP overlap, proj's SMs not the default (16).
const OVERLAP = path('overlap.yaml');
writeFileSync(
  OVERLAP,
  'name: bert-tp2-overlap\n' +
    'cluster: { preset: dgx-a100-80gb, nodes: 2 }\n' +
    'model: { preset: bert-large }\n' +
    'training: { globalBatch: 256, microBatch: 8, precision: bf16 }\n' +
    'parallel: { tp: 2, sequenceParallel: true, tpCommOverlap: ' +
    'true, tpCommOverlapSms: { proj: 20, fc2: 12, bulk: 0 } }\n',
);
// --set applies to both files: cpCommType matters only for the cp 2 one.
const SWEEP = [CP, '--compare', OVERLAP, '--set', 'parallel.cpCommType=all_gather', '--gpus', '8,16'];

type Series = Record<string, unknown> & { rows: unknown[] };
let whole: { json: string; csv: string };

/** The CSV as one object per line, by column name. */
function csvRecords(text: string): Record<string, string>[] {
  const [header, ...body] = text
    .trimEnd()
    .split('\n')
    .map((l) => l.split(','));
  return body.map((cells) => Object.fromEntries(header.map((h, i) => [h, cells[i]])));
}

beforeAll(async () => {
  const r = await cli('scale', ...SWEEP, '--json', '--csv', path('whole.csv'));
  expect(r.code, r.err).toBe(0);
  whole = { json: r.out, csv: readFileSync(path('whole.csv'), 'utf8') };
  for (const i of [1, 2, 3])
    expect((await cli('scale', ...SWEEP, '--shard', `${i}/3`, '--out', path(`part-${i}.jsonl`))).code).toBe(0);
}, 120_000);

describe('scale carries the context-parallel communication type and TP overlap', () => {
  it('writes them in each --json series, only where they apply', () => {
    const [cp, overlap] = (JSON.parse(whole.json) as { series: Series[] }).series;
    expect(cp).toMatchObject({ tp: 1, pp: 1, cp: 2, cpCommType: 'all_gather' });
    expect(cp).not.toHaveProperty('tpCommOverlap');
    expect(cp).not.toHaveProperty('tpCommOverlapSms');
    expect(overlap).toMatchObject({
      tp: 2,
      pp: 1,
      tpCommOverlap: true,
      tpCommOverlapSms: { proj: 20, fc2: 12, bulk: 0 },
    });
    // cp 1: no cp, and the --set cpCommType does not apply.
    expect(overlap).not.toHaveProperty('cp');
    expect(overlap).not.toHaveProperty('cpCommType');
  });

  it('names the same sweep as simulate --json does under parallel', async () => {
    const sim = JSON.parse((await cli('simulate', CP, '--set', 'parallel.cpCommType=all_gather', '--json')).out);
    const [cp] = (JSON.parse(whole.json) as { series: Series[] }).series;
    expect(cp.cpCommType).toBe(sim.parallel.cpCommType);
    const simOverlap = JSON.parse((await cli('simulate', OVERLAP, '--json')).out);
    const [, overlap] = (JSON.parse(whole.json) as { series: Series[] }).series;
    expect(overlap.tpCommOverlapSms).toEqual(simOverlap.parallel.tpCommOverlapSms);
  });

  it('writes them as columns of every CSV line, empty where they do not apply', () => {
    const rows = csvRecords(whole.csv);
    expect(rows).toHaveLength(4);
    const fixed = (r: Record<string, string>) => [
      r.scenario,
      r.gpus,
      r.tp,
      r.pp,
      r.cp,
      r.cp_comm_type,
      r.tp_comm_overlap,
      r.tp_comm_overlap_sms_proj,
      r.tp_comm_overlap_sms_fc2,
      r.tp_comm_overlap_sms_bulk,
    ];
    expect(rows.map(fixed)).toEqual([
      ['dgxc-llama31-8b-cp2', '8', '1', '1', '2', 'all_gather', 'false', '', '', ''],
      ['dgxc-llama31-8b-cp2', '16', '1', '1', '2', 'all_gather', 'false', '', '', ''],
      ['bert-tp2-overlap', '8', '2', '1', '1', '', 'true', '20', '12', '0'],
      ['bert-tp2-overlap', '16', '2', '1', '1', '', 'true', '20', '12', '0'],
    ]);
    expect(rows.every((r) => r.status === 'ok')).toBe(true);
  });

  it('keeps them in the --shard records, and merge gives back the same JSON and CSV', async () => {
    const records = [1, 2, 3].flatMap((i) =>
      readFileSync(path(`part-${i}.jsonl`), 'utf8')
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l)),
    );
    for (const r of records) {
      if (r.series === 0) expect(r).toMatchObject({ cp: 2, cpCommType: 'all_gather' });
      else expect(r).toMatchObject({ tpCommOverlap: true, tpCommOverlapSms: { proj: 20, fc2: 12, bulk: 0 } });
      expect(r.series === 0 ? 'tpCommOverlap' in r : 'cpCommType' in r).toBe(false);
    }
    const merged = await cli(
      'merge',
      path('part-2.jsonl'),
      path('part-3.jsonl'),
      path('part-1.jsonl'),
      '--json',
      '--csv',
      path('merged.csv'),
    );
    expect(merged.code, merged.err).toBe(0);
    expect(merged.out).toBe(whole.json);
    expect(readFileSync(path('merged.csv'), 'utf8')).toBe(whole.csv);
  });

  it('merge refuses a part whose settings differ from its series, or are malformed (exit 2)', async () => {
    const lines = (i: number) =>
      readFileSync(path(`part-${i}.jsonl`), 'utf8')
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l));
    // Four points over three parts: part 1 holds points 0 and 3, part 2 point 1, part 3
    // point 2 (series 0: points 0, 1).
    const mergeEdited = (part: number, change: (r: Record<string, unknown>) => Record<string, unknown>) => {
      writeFileSync(
        path('edited.jsonl'),
        lines(part)
          .map((r) => JSON.stringify(change(r)))
          .join('\n'),
      );
      return cli('merge', ...[1, 2, 3].map((i) => (i === part ? path('edited.jsonl') : path(`part-${i}.jsonl`))));
    };
    const p2p = await mergeEdited(2, (r) => ({ ...r, cpCommType: 'p2p' }));
    expect(p2p.code).toBe(2);
    expect(p2p.err).toContain('with tp 1 × cp 2 × pp 1, cpCommType p2p, but');
    const off = await mergeEdited(3, ({ tpCommOverlap: _o, tpCommOverlapSms: _s, ...r }) => r);
    expect(off.code).toBe(2);
    expect(off.err).toMatch(
      new RegExp(
        /with tp 2 × pp 1, but .* says 'bert-tp2-overlap' with tp 2 × pp 1, /.source +
          /tpCommOverlap \(SMs proj 20, fc2 12, bulk 0\)/.source,
      ),
    );
    expect((await mergeEdited(2, (r) => ({ ...r, cpCommType: 'ring' }))).err).toContain(
      `'cpCommType' is "ring"; expected 'p2p', 'all_gather', 'a2a'`,
    );
    expect((await mergeEdited(3, (r) => ({ ...r, tpCommOverlapSms: { proj: 20 } }))).err).toMatch(
      /'tpCommOverlapSms' is \{"proj":20\}; expected \{ proj, fc2, bulk \}/,
    );
  });
});
