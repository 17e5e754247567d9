import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { BUILT_BIN, buildCli } from './builtCli.js';
import { cli } from '../helpers/cli.js';

beforeAll(buildCli, 300_000);

/**
 * Sends SIGINT to the command once its stderr says that its first point is done (a plain line, stderr being a pipe).
 */
function ctrlCAfterFirstPoint(
  child: { kill(signal: NodeJS.Signals): boolean; killed: boolean },
  err: string,
  what: string,
): void {
  if (!child.killed && new RegExp(`^${what}: 1/4 runs done in \\d+ s \\(last: .* at \\d+ GPUs\\)$`, 'm').test(err))
    child.kill('SIGINT');
}

describe('a sweep part cut short by Ctrl-C', () => {
  it.each([['1'], ['2']])(
    'keeps the points done in --out, says how many, exits 130, and merge then names the points missing (--jobs %s)',
    async (jobs) => {
      const out = join(mkdtempSync(join(tmpdir(), 'clustersim-sint-')), 'part.jsonl');
      // Four points of several seconds each (two chunks per stage; the scenario's eight take longer): Ctrl-C lands once
      // the first is done (its progress line says so, and the handler is in place by then), however loaded the machine.
      // With workers this thread only coordinates, so it stops handing out points at once.
      const args = [
        BUILT_BIN,
        'scale',
        'scenarios/llama3-405b-16384xh100.yaml',
        '--set',
        'parallel.virtualStages=2',
        '--gpus',
        '2048..16384',
        '--shard',
        '1/1',
        '--out',
        out,
        '--jobs',
        jobs,
      ];
      const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      child.stderr.on('data', (d: Buffer) => {
        err += d.toString();
        ctrlCAfterFirstPoint(child, err, 'part 1/1');
      });
      const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
      expect(code, err).toBe(130);
      expect(err).toMatch(/part 1\/1: stopping after the points in flight/);
      const done = Number(
        new RegExp(
          /part 1\/1 interrupted: (\d) of its 4 points were done and are in .*part\.jsonl; /.source +
            /merge refuses a part with points missing/.source,
        ).exec(err)?.[1],
      );
      expect(done).toBeGreaterThanOrEqual(1);
      expect(done).toBeLessThan(4);
      expect(existsSync(out)).toBe(true);
      const lines = readFileSync(out, 'utf8')
        .split('\n')
        .filter((l) => l !== '');
      expect(lines.length).toBe(done);
      const merged = await cli('merge', out);
      expect(merged.code).toBe(2);
      expect(merged.err).toMatch(new RegExp(`missing ${4 - done} of 4 points of the sweep`));
    },
    120_000,
  );

  it('a whole sweep prints what was done, marks the sizes left out, and exits 130', async () => {
    const args = [
      BUILT_BIN,
      'scale',
      'scenarios/llama3-405b-16384xh100.yaml',
      '--set',
      'parallel.virtualStages=2',
      '--gpus',
      '2048..16384',
      '--json',
      '--jobs',
      '1',
    ];
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let [out, err] = ['', ''];
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      ctrlCAfterFirstPoint(child, err, 'scale');
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    expect(code, err).toBe(130);
    expect(err).toMatch(/scale: stopping after the sizes in flight/);
    const rows = JSON.parse(out).series[0].rows as { gpus: number; status: string; reason?: string }[];
    expect(rows.map((r) => r.gpus)).toEqual([2048, 4096, 8192, 16384]);
    const left = rows.filter((r) => r.reason === 'interrupted (Ctrl-C) before this size was simulated');
    expect(left.length).toBeGreaterThan(0);
    expect(rows.length - left.length).toBeGreaterThan(0);
    expect(left.every((r) => r.status === 'interrupted')).toBe(true);
    expect(err).toMatch(/scale interrupted: the sizes not simulated are rows marked/);
  }, 120_000);
});
