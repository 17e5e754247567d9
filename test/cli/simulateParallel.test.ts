import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { BUILT_BIN, buildCli, builtModuleUrl } from './builtCli.js';

const run = promisify(execFile);
const BIN = BUILT_BIN;
const TP8 = 'scenarios/llama2-13b-tp8-nvswitch.yaml';
const PROFILE = 'reports/calibration/h200/profile.json';
const SLOW = 240_000;

async function clustersim(...args: string[]): Promise<{ out: string; err: string; code: number }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args], { maxBuffer: 64 << 20 });
    return { out: stdout, err: stderr, code: 0 };
  } catch (e) {
    const err = e as { stdout: string; stderr: string; code: number };
    return { out: err.stdout, err: err.stderr, code: err.code };
  }
}

beforeAll(buildCli, 300_000);

describe('simulate: the alternatives on worker threads (built CLI)', () => {
  it(
    'prints byte-identical JSON and text with --jobs 1 and with workers, with and without a profile',
    async () => {
      for (const extra of [[], ['--profile', PROFILE, '--set', 'cluster.gpu=h200-sxm-141gb']]) {
        const one = await clustersim('simulate', TP8, '--json', '--jobs', '1', ...extra);
        const four = await clustersim('simulate', TP8, '--json', '--jobs', '4', ...extra);
        expect(one.code).toBe(0);
        expect(four.out).toBe(one.out);
        expect(JSON.parse(one.out).alternatives.length).toBeGreaterThanOrEqual(2);
        const text = [
          await clustersim('simulate', TP8, '--jobs', '1', ...extra),
          await clustersim('simulate', TP8, '--jobs', '3', ...extra),
        ];
        expect(text[1].out).toBe(text[0].out);
        expect(text[0].out).toMatch(/what to try \(each simulated\)/);
      }
      // The profile reaches the alternatives simulated on the workers: their times move with it.
      const plain = JSON.parse(
        (await clustersim('simulate', TP8, '--json', '--jobs', '4', '--set', 'cluster.gpu=h200-sxm-141gb')).out,
      );
      const profiled = JSON.parse(
        (
          await clustersim(
            'simulate',
            TP8,
            '--json',
            '--jobs',
            '4',
            '--profile',
            PROFILE,
            '--set',
            'cluster.gpu=h200-sxm-141gb',
          )
        ).out,
      );
      expect(profiled.alternatives.map((a: { stepTimeS: number }) => a.stepTimeS)).not.toEqual(
        plain.alternatives.map((a: { stepTimeS: number }) => a.stepTimeS),
      );
    },
    SLOW,
  );

  it(
    'really runs alternatives on worker threads, each as this thread does',
    async () => {
      // Tasks handed to the compiled alternatives worker directly; what this thread runs is marked, and held a second
      // so that the workers, however slow to start, find tasks left.
      const script = `
      const { runTasks, compiledWorker } = await import(${JSON.stringify(builtModuleUrl('threads/taskPool.js'))});
      const { evaluateCandidate } = await import(${JSON.stringify(builtModuleUrl('advise/evaluate.js'))});
      const worker = compiledWorker(new URL(${JSON.stringify(builtModuleUrl('advise/alternativeWorker.js'))}));
      const raw = {
        name: 'b',
        cluster: { preset: 'dgx-a100-80gb', nodes: 16 },
        model: { preset: 'llama2-7b' },
        training: { globalBatch: 256, microBatch: 1, precision: 'bf16' },
        parallel: { dp: 128 },
      };
      const candidates = [5, 10, 15, 20, 25, 30, 35, 40].map((mb) => ({
        label: 'buckets ' + mb,
        sets: ['parallel.ddp.bucketMB=' + mb],
      }));
      const job = { raw, baseSets: [], source: 'test', baseDir: process.cwd(), candidates };
      const ids = [0, 1, 2, 3, 4, 5, 6, 7];
      const runHere = (i) => {
        const t = Date.now();
        while (Date.now() - t < 1000);
        return { ...evaluateCandidate(job, i), here: true };
      };
      const threaded = await runTasks({ jobs: 4, worker, job, ids, runHere });
      const here = ids.map((i) => evaluateCandidate(job, i));
      process.stdout.write(JSON.stringify({ threaded, here, found: worker !== undefined }));`;
      const file = join(mkdtempSync(join(tmpdir(), 'clustersim-alt-')), 'alt.mjs');
      writeFileSync(file, script);
      const out = JSON.parse((await run(process.execPath, [file], { maxBuffer: 64 << 20 })).stdout);
      expect(out.found).toBe(true);
      expect(out.here.every((a: { stepTimeS?: number }) => a.stepTimeS! > 0)).toBe(true);
      // Three workers ran beside this thread, took some of the tasks, and gave what this thread gives.
      expect(out.threaded.workers).toBe(3);
      const results = out.threaded.results as ({ here?: boolean } & Record<string, unknown>)[];
      expect(results.filter((r) => !r.here).length).toBeGreaterThan(0);
      expect(results.map(({ here: _, ...r }) => r)).toEqual(out.here);
    },
    SLOW,
  );

  it(
    'refuses a --jobs that is not a whole number of threads',
    async () => {
      for (const bad of ['0', 'x', '1.5']) {
        const r = await clustersim('simulate', TP8, '--jobs', bad);
        expect(r.code).not.toBe(0);
        expect(r.err).toMatch(
          /--jobs: '.*' is not a number of threads; give a whole number ≥ 1 \(1 runs the alternatives in one thread/,
        );
        expect(r.err).not.toMatch(/\n\s+at /);
      }
    },
    SLOW,
  );
});
