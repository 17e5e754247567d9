import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildIfStale } from './builtCli.js';
import { cli } from '../helpers/cli.js';

beforeAll(buildIfStale, 300_000);

describe('a sweep part cut short by Ctrl-C', () => {
  it.each([['1'], ['2']])('keeps the points done in --out, says how many, exits 130, and merge then names the points missing (--jobs %s)', async (jobs) => {
    const out = join(mkdtempSync(join(tmpdir(), 'clustersim-sint-')), 'part.jsonl');
    // Four points of several seconds each: Ctrl-C lands while the part is still running (its handler is in place well
    // within the first seconds). With workers this thread only coordinates, so it stops handing out points at once.
    const args = ['bin/clustersim.js', 'scale', 'scenarios/llama3-405b-16384xh100.yaml', '--gpus', '2048..16384', '--shard', '1/1', '--out', out, '--jobs', jobs];
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    setTimeout(() => child.kill('SIGINT'), 4000);
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    expect(code, err).toBe(130);
    expect(err).toMatch(/part 1\/1: stopping after the points in flight/);
    const done = Number(/part 1\/1 interrupted: (\d) of its 4 points were done and are in .*part\.jsonl; merge refuses a part with points missing/.exec(err)?.[1]);
    expect(done).toBeGreaterThanOrEqual(0);
    expect(done).toBeLessThan(4);
    expect(existsSync(out)).toBe(true);
    const lines = readFileSync(out, 'utf8').split('\n').filter((l) => l !== '');
    expect(lines.length).toBe(done);
    const merged = await cli('merge', out);
    expect(merged.code).toBe(2);
    // With no point done the file is empty and merge cannot tell the sweep: it says every part is empty.
    expect(merged.err).toMatch(done > 0 ? new RegExp(`missing ${4 - done} of 4 points of the sweep`) : /no points in .*part\.jsonl/);
  }, 120_000);

  it('a whole sweep prints what was done, marks the sizes left out, and exits 130', async () => {
    const args = ['bin/clustersim.js', 'scale', 'scenarios/llama3-405b-16384xh100.yaml', '--gpus', '2048..16384', '--json', '--jobs', '1'];
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let [out, err] = ['', ''];
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    setTimeout(() => child.kill('SIGINT'), 4000);
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    expect(code, err).toBe(130);
    expect(err).toMatch(/scale: stopping after the sizes in flight/);
    if (out === '') {
      expect(err).toMatch(/scale interrupted before any size was simulated; nothing written/);
      return;
    }
    const rows = JSON.parse(out).series[0].rows as { gpus: number; status: string; reason?: string }[];
    expect(rows.map((r) => r.gpus)).toEqual([2048, 4096, 8192, 16384]);
    const left = rows.filter((r) => r.reason === 'interrupted (Ctrl-C) before this size was simulated');
    expect(left.length).toBeGreaterThan(0);
    expect(rows.length - left.length).toBeGreaterThan(0);
    expect(left.every((r) => r.status === 'infeasible')).toBe(true);
    expect(err).toMatch(/scale interrupted: the sizes not simulated are rows marked/);
  }, 120_000);
});
