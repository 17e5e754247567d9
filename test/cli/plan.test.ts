import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, expectBadInput } from '../helpers/badInput.js';
import { shellWords } from '../../src/scenario/importShellWords.js';

const FILE = 'scenarios/llama2-13b-tp8-nvswitch.yaml';
// A space of a few dozen candidates: tp 4 or 8, pp 1 or 2, micro-batch 1 or 2.
const NARROW = ['--space', 'tp=4,8', '--space', 'pp=1,2', '--space', 'microBatch=1,2', '--space', 'virtualStages=2'];

describe('clustersim plan', () => {
  const dir = mkdtempSync(join(tmpdir(), 'clustersim-plan-'));

  it('ranks the simulated setups by step time, and the written winner simulates to the same step', async () => {
    const best = join(dir, 'best.yaml');
    const report = join(dir, 'plan.html');
    const r = await cli('plan', FILE, ...NARROW, '--json', '--write', best, '--report', report, '--top', '3');
    expect(r.code, r.stderr).toBe(0);
    const plan = JSON.parse(r.stdout);
    const times = plan.rows.map((row: { stepTimeS: number }) => row.stepTimeS);
    expect(times).toHaveLength(3);
    expect(times).toEqual([...times].sort((a: number, b: number) => a - b));
    for (const row of plan.rows) {
      expect(row.fits).toBe(true);
      for (const s of row.changed) expect(row.sets).toContain(s);
      expect(row.errorBand.lowS).toBeLessThan(row.errorBand.highS);
    }
    // The report draws every estimated candidate and numbers the three simulated.
    const html = readFileSync(report, 'utf8');
    expect(html).toContain(`data-points="${plan.points.length}"`);
    expect(html.match(/class="rank"/g)).toHaveLength(3);
    expect(readFileSync(best, 'utf8')).toMatch(
      /^# Written by clustersim plan from scenarios\/llama2-13b-tp8-nvswitch.yaml/,
    );
    const again = await cli('simulate', best, '--json', '--alternatives', '0');
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout).stepTimeS).toBe(plan.rows[0].stepTimeS);
  }, 120_000);

  it('prints the table, why the winner wins, and a command that reproduces it', async () => {
    const r = await cli('plan', FILE, ...NARROW, '--tokens', '300B', '--price', '2');
    expect(r.code, r.stderr).toBe(0);
    for (const s of [
      'pruned by the memory account',
      'estimated',
      'likely',
      'tokens/s',
      'memory per GPU',
      'ties:',
      'to train 300B tokens with #1',
    ])
      expect(r.stdout).toContain(s);
    const run = /to run #1: clustersim (.*)$/m.exec(r.stdout);
    expect(run).not.toBeNull();
    const words = shellWords(run![1], 'test').words;
    const sim = await cli(...words, '--json', '--alternatives', '0');
    expect(sim.code, sim.stderr).toBe(0);
    const json = await cli('plan', FILE, ...NARROW, '--json');
    expect(JSON.parse(sim.stdout).stepTimeS).toBe(JSON.parse(json.stdout).rows[0].stepTimeS);
  }, 120_000);

  it('prices the winner: days, GPU-hours and cost from its throughput', async () => {
    const r = await cli('plan', FILE, ...NARROW, '--json', '--tokens', '1T', '--price', '2.5', '--top', '1');
    const row = JSON.parse(r.stdout).rows[0];
    const seconds = 1e12 / row.tokensPerS;
    expect(row.run.days).toBeCloseTo(seconds / 86400, 9);
    expect(row.run.gpuHours).toBeCloseTo((8 * seconds) / 3600, 6);
    expect(row.run.cost).toBeCloseTo(row.run.gpuHours * 2.5, 6);
  }, 60_000);

  it('gives the same answer twice', async () => {
    const a = await cli('plan', FILE, ...NARROW, '--json');
    const b = await cli('plan', FILE, ...NARROW, '--json');
    expect(a.stdout).toBe(b.stdout);
  }, 60_000);

  it('plans each GPU count of a range and picks the best for the objective', async () => {
    for (const objective of ['throughput', 'cost']) {
      const r = await cli('plan', FILE, ...NARROW, '--gpus', '8,16', '--objective', objective, '--json', '--top', '1');
      expect(r.code, r.stderr).toBe(0);
      const j = JSON.parse(r.stdout);
      expect(j.sizes.map((p: { gpus: number }) => p.gpus)).toEqual([8, 16]);
      const score = (p: { gpus: number; rows: { tokensPerS: number }[] }) =>
        objective === 'cost' ? p.gpus / p.rows[0].tokensPerS : 1 / p.rows[0].tokensPerS;
      const best = j.sizes.reduce(
        (a: { gpus: number; rows: { tokensPerS: number }[] }, b: { gpus: number; rows: { tokensPerS: number }[] }) =>
          score(b) < score(a) ? b : a,
      );
      expect(j.objective).toBe(objective);
      expect(j.chosenGpus).toBe(best.gpus);
    }
  }, 120_000);

  it('refuses bad options with exit 2 and says what is allowed', async () => {
    expectBadInput(await cli('plan', FILE, '--space', 'bucketMB=5'), 'not a setting the plan searches');
    expectBadInput(await cli('plan', FILE, '--fix', 'tp=2,4'), 'give one value');
    expectBadInput(await cli('plan', FILE, '--price', '2'), '--price: needs --tokens');
    expectBadInput(await cli('plan', FILE, '--tokens', 'lots'), "--tokens: 'lots' is not a token count");
    expectBadInput(await cli('plan', FILE, '--gpus', '12'), '12 GPUs are not whole nodes of 8');
    expectBadInput(await cli('plan', FILE, '--top', '0'), '--top');
    expectBadInput(await cli('plan', FILE, '--gpus', '8..4'), '--gpus');
    expectBadInput(await cli('plan', FILE, '--objective', 'speed'), 'speed');
  });
});
