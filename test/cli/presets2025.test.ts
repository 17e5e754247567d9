import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli.js';

/** A small Llama on one node of `preset`, with a batch every GPU count of these nodes divides. */
function scenarioOn(preset: string, training: Record<string, unknown> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'clustersim-presets-'));
  const file = join(dir, 's.json');
  const scenario = {
    name: `small on ${preset}`,
    cluster: { preset, nodes: 1 },
    model: { preset: 'llama2-7b', layers: 4, seqLen: 2048 },
    training: { globalBatch: 144, microBatch: 1, ...training },
    parallel: { tp: 2, sequenceParallel: true, zero: 1 },
  };
  writeFileSync(file, JSON.stringify(scenario));
  return file;
}

const NEW_NODES = ['hgx-b200', 'gb200-nvl72', 'mi300x-8gpu', 'mi355x-8gpu', 'h100-pcie-8gpu', 'l40s-8gpu'];

describe('the node presets of 2024-26 through every command', () => {
  it.each(NEW_NODES)('%s: simulate, memory and scale run, and say the GPU they ran on', async (preset) => {
    const file = scenarioOn(preset);
    const sim = await cli('simulate', file, '--json', '--alternatives', '0');
    expect(sim.code).toBe(0);
    const r = JSON.parse(sim.out);
    expect(r.stepTimeS).toBeGreaterThan(0);
    expect(r.memory.fits).toBe(true);
    const memory = await cli('memory', file);
    expect(memory.code).toBe(0);
    expect(memory.out).toContain(preset);
    const scale = await cli('scale', file, '--gpus', preset === 'gb200-nvl72' ? '72' : '8..16', '--json');
    expect(scale.code).toBe(0);
    expect(JSON.parse(scale.out).series[0].rows.length).toBeGreaterThan(0);
  });

  it.each(['mi300x-8gpu', 'gb200-nvl72'])(
    '%s: plan ranks the splits and never offers TP overlap on AMD',
    async (preset) => {
      const { code, out } = await cli('plan', scenarioOn(preset), '--fix', 'zero=1', '--top', '2', '--json');
      expect(code).toBe(0);
      const plan = JSON.parse(out);
      expect(plan.rows.length).toBeGreaterThan(0);
      if (preset === 'mi300x-8gpu') expect(JSON.stringify(plan.rows)).not.toContain('parallel.tpCommOverlap=true');
    },
  );

  it.each(NEW_NODES)('%s: collective sweeps its all_reduce and all_to_all', async (preset) => {
    for (const op of ['all_reduce', 'all_to_all']) {
      const { code, out } = await cli('collective', '--cluster', preset, '--op', op, '--max-bytes', '1MiB', '--json');
      expect(code).toBe(0);
      expect(JSON.parse(out).every((row: { busbwGBps: number }) => row.busbwGBps > 0)).toBe(true);
    }
  });

  it('runs FP8 on the FP8 GPUs, MXFP8 on Blackwell only, and says on AMD what "NVLink" means', async () => {
    for (const preset of ['hgx-b200', 'mi300x-8gpu', 'l40s-8gpu']) {
      const { code } = await cli('simulate', scenarioOn(preset, { precision: 'fp8' }), '--alternatives', '0');
      expect(code).toBe(0);
    }
    expect(
      (await cli('simulate', scenarioOn('gb200-nvl72', { precision: 'fp8', fp8: { recipe: 'mxfp8' } }))).code,
    ).toBe(0);
    const refused = await cli('simulate', scenarioOn('mi355x-8gpu', { precision: 'fp8', fp8: { recipe: 'mxfp8' } }));
    expect(refused.code).not.toBe(0);
    expect(refused.err).toMatch(/mxfp8 .* runs on Blackwell only .* mi355x-288gb is CDNA 4/);
    const amd = await cli('simulate', scenarioOn('mi300x-8gpu'), '--alternatives', '0');
    // The summary wraps its notes: any whitespace between the words.
    expect(amd.out).toMatch(/RCCL's rings\s+over\s+the\s+Infinity\s+Fabric\s+mesh/);
    expect(amd.out).toMatch(/"NVLink"\s+in\s+this\s+output\s+means\s+Infinity\s+Fabric/);
  });
});
