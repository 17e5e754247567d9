import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, expectBadInput } from '../helpers/badInput.js';

const FILE = 'scenarios/llama2-13b-tp8-nvswitch.yaml';
const NARROW = [
  '--space',
  'tp=2,4,8',
  '--space',
  'pp=1,2',
  '--space',
  'microBatch=1,2',
  '--space',
  'virtualStages=2',
  '--top',
  '3',
];

describe('a sharded plan', () => {
  const dir = mkdtempSync(join(tmpdir(), 'clustersim-plan-shard-'));
  const part = (i: number) => join(dir, `part-${i}.json`);

  it('merges into the answer of the unsharded plan', async () => {
    for (const i of [1, 2, 3]) {
      const r = await cli('plan', FILE, ...NARROW, '--shard', `${i}/3`, '--out', part(i));
      expect(r.code, r.stderr).toBe(0);
    }
    const merged = await cli('merge', part(3), part(1), part(2), '--json');
    expect(merged.code, merged.stderr).toBe(0);
    const whole = await cli('plan', FILE, ...NARROW, '--json');
    const m = JSON.parse(merged.stdout);
    const w = JSON.parse(whole.stdout);
    expect(m.rows).toEqual(w.rows);
    expect(m.own).toEqual(w.own);
    for (const k of ['layouts', 'layoutsRemoved', 'candidates', 'memoryRemoved', 'fitting', 'gpus'])
      expect(m[k], k).toEqual(w[k]);
    // Each part bounds against its own best, so together they estimate at least as many.
    expect(m.estimated + m.bounded).toBe(w.estimated + w.bounded);
    const text = await cli('merge', part(1), part(2), part(3));
    expect(text.stdout).toContain('to run #1: clustersim simulate scenarios/llama2-13b-tp8-nvswitch.yaml');
  }, 180_000);

  it('refuses parts that are missing, repeated, from another plan or tampered with', async () => {
    expectBadInput(await cli('merge', part(1), part(2)), 'shard 3/3 missing');
    expectBadInput(await cli('merge', part(1), part(2), part(2), part(3)), 'shard 2/3 is also in');
    const other = join(dir, 'other.json');
    const r = await cli('plan', FILE, ...NARROW, '--space', 'zero=0,1', '--shard', '3/3', '--out', other);
    expect(r.code, r.stderr).toBe(0);
    expectBadInput(await cli('merge', part(1), part(2), other), 'from another plan');
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, readFileSync(part(3), 'utf8').replace(/"stepTimeS":[0-9.e+-]+/, '"stepTimeS":-1'));
    expectBadInput(await cli('merge', part(1), part(2), bad), "'result.rows.0.sim.stepTimeS'");
    writeFileSync(bad, readFileSync(part(3), 'utf8').replace('"tie":false', '"tie":false,"__proto__":{"x":1}'));
    expectBadInput(await cli('merge', part(1), part(2), bad), 'bad.json');
  }, 180_000);

  it('refuses --shard with outputs that belong to merge, and with several GPU counts', async () => {
    expectBadInput(await cli('plan', FILE, '--shard', '1/2', '--json'), '--json belong to clustersim merge');
    expectBadInput(await cli('plan', FILE, '--shard', '1/2', '--gpus', '8,16'), 'plans one GPU count');
    expectBadInput(await cli('plan', FILE, '--shard', '3/2'), '--shard');
    expectBadInput(await cli('plan', FILE, '--out', 'x.json'), '--out: only with --shard');
  });
});
