import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { BUILT_BIN, buildCli, builtModuleUrl } from './builtCli.js';

// Worker threads load compiled JavaScript, so the threaded path is tested through the built CLI (test/cli/builtCli.ts);
// under vitest the sweep modules are TypeScript and run in one thread.
const run = promisify(execFile);
const BIN = BUILT_BIN;
const BERT = 'scenarios/bert-large-ddp-2node.yaml';
const TP8 = 'scenarios/llama2-13b-tp8-nvswitch.yaml';
const SWEEP = [BERT, '--compare', TP8, '--gpus', '4,8,12,16', '--mode', 'weak'];
// Each test spawns several CLI runs; a loaded machine needs more than the default minute.
const SLOW = 240_000;

async function clustersim(...args: string[]): Promise<{ out: string; err: string }> {
  const { stdout, stderr } = await run(process.execPath, [BIN, ...args], { maxBuffer: 64 << 20 });
  return { out: stdout, err: stderr };
}

const dir = mkdtempSync(join(tmpdir(), 'clustersim-jobs-'));

beforeAll(buildCli, 300_000);

describe('clustersim scale on worker threads (built CLI)', () => {
  it(
    'prints byte-identical JSON, CSV and tables with --jobs 1, 2 and 3',
    async () => {
      const outputs = [];
      for (const jobs of ['1', '2', '3']) {
        const csv = join(dir, `jobs-${jobs}.csv`);
        const json = await clustersim('scale', ...SWEEP, '--json', '--csv', csv, '--jobs', jobs);
        outputs.push({ json: json.out, csv: readFileSync(csv, 'utf8') });
      }
      expect(JSON.parse(outputs[0].json).series).toHaveLength(2);
      expect(outputs[1]).toEqual(outputs[0]);
      expect(outputs[2]).toEqual(outputs[0]);
      const tables = [await clustersim('scale', ...SWEEP, '--jobs', '1'), await clustersim('scale', ...SWEEP)];
      expect(tables[1].out).toBe(tables[0].out);
    },
    SLOW,
  );

  it(
    'really runs on worker threads, and gives the same series and report run as one thread',
    async () => {
      const script = `
      import { loadScenarioFile } from '${builtModuleUrl('scenario/load.js')}';
      import { planSeries } from '${builtModuleUrl('sweep/scale.js')}';
      import { runScaleSweep } from '${builtModuleUrl('sweep/sweep.js')}';
      const plans = ['${BERT}', '${TP8}'].map((f) => planSeries(loadScenarioFile(f), 'weak'));
      const out = {};
      for (const jobs of [1, 2, 3]) {
        const { series, workers } = await runScaleSweep(plans, [4, 8, 12, 16], { jobs, keepLargest: true });
        const largest = series[0].largest;
        out[jobs] = {
          workers,
          rows: series.map((s) => s.rows),
          largest: { gpus: largest.gpus, result: largest.run.result },
        };
      }
      process.stdout.write(JSON.stringify(out));`;
      const file = join(dir, 'threads.mjs');
      writeFileSync(file, script);
      const { stdout } = await run(process.execPath, [file], { maxBuffer: 64 << 20 });
      const out = JSON.parse(stdout);
      // This thread plus jobs − 1 workers.
      expect([out[1].workers, out[2].workers, out[3].workers]).toEqual([0, 1, 2]);
      for (const jobs of [2, 3]) {
        expect(out[jobs].rows).toEqual(out[1].rows);
        expect(out[jobs].largest).toEqual(out[1].largest);
      }
      expect(out[1].largest.gpus).toBe(16);
    },
    SLOW,
  );

  it(
    'merges threaded parts into the output of the unsharded run',
    async () => {
      const whole = await clustersim('scale', ...SWEEP, '--json', '--jobs', '2');
      const parts = [];
      for (const i of [1, 2]) {
        const file = join(dir, `part-${i}.jsonl`);
        await clustersim('scale', ...SWEEP, '--shard', `${i}/2`, '--out', file, '--jobs', '2');
        parts.push(file);
      }
      const merged = await clustersim('merge', ...parts, '--json');
      expect(merged.out).toBe(whole.out);
    },
    SLOW,
  );
});
