import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli.js';
import { SCALE_CSV_COLUMNS } from '../../src/report/scaleTable.js';

const BERT = 'scenarios/bert-large-ddp-2node.yaml';

async function scaleJson(...args: string[]) {
  const r = await cli('scale', BERT, '--json', ...args);
  expect(r.code).toBe(0);
  return JSON.parse(r.out) as { mode: string; series: { name: string; rows: Record<string, unknown>[] }[] };
}

describe('clustersim scale', () => {
  it('keeps the global batch in strong scaling and reports efficiency against linear', async () => {
    const doc = await scaleJson('--gpus', '8,16,32');
    expect(doc.mode).toBe('strong');
    const rows = doc.series[0].rows as {
      gpus: number;
      globalBatch: number;
      dp: number;
      nodes: number;
      samplesPerS: number;
      speedup: number;
      efficiency: number;
      stepTimeS: number;
    }[];
    expect(rows.map((r) => [r.gpus, r.nodes, r.dp, r.globalBatch])).toEqual([
      [8, 1, 8, 256],
      [16, 2, 16, 256],
      [32, 4, 32, 256],
    ]);
    expect(rows[0].speedup).toBe(1);
    for (const r of rows) {
      expect(r.speedup).toBeCloseTo(r.samplesPerS / rows[0].samplesPerS, 12);
      // Fixed batch: the throughput ratio is the step-time ratio.
      expect(r.speedup).toBeCloseTo(rows[0].stepTimeS / r.stepTimeS, 9);
      expect(r.efficiency).toBeCloseTo(r.speedup / (r.gpus / 8), 12);
      expect(r.efficiency).toBeLessThan(1.05);
    }
  });

  it('keeps the batch per replica in weak scaling (16 sequences per GPU for this scenario)', async () => {
    const doc = await scaleJson('--gpus', '8,16,32', '--mode', 'weak');
    const rows = doc.series[0].rows as { gpus: number; globalBatch: number; stepTimeS: number }[];
    expect(rows.map((r) => r.globalBatch)).toEqual([128, 256, 512]);
    // The same work per GPU: step time changes only by communication.
    expect(Math.abs(rows[2].stepTimeS / rows[0].stepTimeS - 1)).toBeLessThan(0.2);
  });

  it(
    'names the size speedup and efficiency are against, ' + 'the smallest simulated, in the table and the JSON',
    async () => {
      // 3 GPUs cannot hold the batch (256 over 8 × 3), so the base is 4, the smallest size simulated.
      const doc = (await scaleJson('--gpus', '3,4,8')) as unknown as {
        series: {
          scalingBaseGpus?: number;
          rows: { gpus: number; status: string; stepTimeS: number; speedup: number; efficiency: number }[];
        }[];
      };
      const s = doc.series[0];
      expect(s.rows[0].status).toBe('infeasible');
      expect(s.scalingBaseGpus).toBe(4);
      const base = s.rows.find((r) => r.gpus === s.scalingBaseGpus)!;
      for (const r of s.rows.filter((r) => r.status === 'ok')) {
        expect(r.speedup).toBeCloseTo(base.stepTimeS / r.stepTimeS, 9);
        expect(r.efficiency).toBeCloseTo((r.speedup * s.scalingBaseGpus!) / r.gpus, 12);
      }
      const text = await cli('scale', BERT, '--gpus', '3,4,8');
      expect(text.out.split('\n')[0]).toContain('speedup and efficiency against 4 GPUs');
    },
  );

  it('reports sizes that cannot be built as rows with a reason, not as a failure', async () => {
    const doc = await scaleJson('--gpus', '4,12,16,64,512');
    const rows = doc.series[0].rows as { gpus: number; status: string; reason?: string; nodes?: number }[];
    expect(rows[0]).toMatchObject({ gpus: 4, status: 'ok', nodes: 1 });
    expect(rows[1]).toMatchObject({ gpus: 12, status: 'infeasible' });
    expect(rows[1].reason).toMatch(/not whole nodes/);
    expect(rows[2].status).toBe('ok');
    // 4 sequences per replica at dp 64: the micro-batch of 8 is lowered to 4 (issue 26, item 16), and runs.
    expect(rows[3]).toMatchObject({ gpus: 64, status: 'ok', microBatch: 4 });
    // 512 replicas cannot split 256 sequences.
    expect(rows[4]).toMatchObject({ gpus: 512, status: 'infeasible' });
    expect(rows[4].reason).toMatch(/^not divisible: global batch 256 over 512 replicas \(dp\)/);
  });

  it('fails with exit code 2, writing nothing, when no size of the sweep can be simulated', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'clustersim-none-'));
    const svg = join(dir, 'none.svg');
    const r = await cli('scale', BERT, '--gpus', '12,24', '--svg', svg);
    expect(r.code).toBe(2);
    // The rows still say why, and the error what to change.
    expect(r.out).toMatch(/not whole nodes: 12 GPUs over nodes of 8/);
    expect(r.err).toMatch(
      new RegExp(
        /no size of the sweep could be simulated .*choose GPU counts of whole nodes /.source +
          /whose data-parallel size divides the global batch, nothing was written/.source,
      ),
    );
    expect(() => readFileSync(svg)).toThrow();
  });

  it('says which --set gave a value it refuses, as simulate does', async () => {
    const args = ['scenarios/llama2-13b-tp8-nvswitch.yaml', '--set', 'parallel.tp=3'];
    const [scale, simulate] = [await cli('scale', ...args, '--gpus', '8,16'), await cli('simulate', ...args)];
    expect(scale.code).toBe(2);
    expect(scale.err).toContain('parallel.tp: 3 does not divide heads (40) [from --set parallel.tp=3]');
    expect(scale.err).toBe(simulate.err);
  });

  it('refuses a precision the GPU has no peak for, as simulate and memory do', async () => {
    for (const command of ['simulate', 'memory', 'scale']) {
      const r = await cli(command, BERT, '--set', 'cluster.preset=dgx-1-v100');
      expect(r.code, command).toBe(2);
      expect(r.err).toMatch(
        new RegExp(
          /training.precision: v100-sxm2-32gb has no dense bf16 peak \(its spec gives fp16, fp32\); /.source +
            /use one it runs, for example --set training.precision=fp16/.source,
        ),
      );
    }
  });

  it(
    "sweeps a split larger than the file's own cluster (cp " +
      '16 on a one-node file) from the fewest nodes that hold it',
    async () => {
      const r = await cli(
        'scale',
        'scenarios/checks/dgxc-llama31-8b-cp2.yaml',
        '--set',
        'parallel.cp=16',
        '--gpus',
        '8,16,32',
        '--json',
      );
      expect(r.code).toBe(0);
      const [series] = JSON.parse(r.out).series;
      expect(series.cp).toBe(16);
      expect(series.rows.map((x: { gpus: number; status: string; dp: number }) => [x.gpus, x.status, x.dp])).toEqual([
        [8, 'infeasible', undefined],
        [16, 'ok', 1],
        [32, 'ok', 2],
      ]);
      // A split of 12 on 8-GPU nodes: the fewest whole nodes it divides are 3.
      const twelve = await cli(
        'scale',
        'scenarios/bert-large-ddp-2node.yaml',
        '--set',
        'parallel.tp=4',
        '--set',
        'parallel.pp=3',
        '--gpus',
        '24,48',
      );
      expect(twelve.code, twelve.err).toBe(0);
    },
  );

  it('prints a table with the documented columns', async () => {
    const { code, out } = await cli('scale', BERT, '--gpus', '8,16,64,512');
    expect(code).toBe(0);
    expect(out).toMatch(
      new RegExp(
        /GPUs\s+nodes\s+dp\s+global batch\s+step time\s+error /.source +
          /band\s+samples\/s\s+tokens\/s\s+speedup\s+efficiency\s+MFU\s+exposed /.source +
          /comm\s+memory\/GPU\s+fits\s+note/.source,
      ),
    );
    expect(out).toMatch(/^\s+8\s+1\s+8\s+256\s.*1\.00x\s+100\.0%.*yes/m);
    expect(out).toMatch(/^\s+64\s.*yes\s+micro-batch 4$/m);
    expect(out).toMatch(/^\s+512\s.*not divisible/m);
  });

  it("gives each simulated size the error band of its kind, one node's apart from several nodes'", async () => {
    const { code, out } = await cli('scale', BERT, '--gpus', '8,16', '--json');
    expect(code).toBe(0);
    const rows = JSON.parse(out).series[0].rows;
    expect(rows.map((r: { kind: { scale: string } }) => r.kind.scale)).toEqual(['one-node', 'multi-node']);
    for (const r of rows) {
      expect(r.errorBand.rows).toBeGreaterThanOrEqual(5);
      expect(r.errorBand.stepTimeLowS).toBeCloseTo(r.stepTimeS * (1 + r.errorBand.lowPct / 100), 12);
      expect(r.errorBand.lowPct).toBeLessThanOrEqual(r.errorBand.highPct);
    }
  });

  it('writes CSV, an SVG chart and an HTML report, and overlays --compare scenarios', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'clustersim-scale-'));
    const [csv, svg, html] = ['s.csv', 's.svg', 's.html'].map((f) => join(dir, f));
    const r = await cli(
      'scale',
      BERT,
      '--gpus',
      '8,16',
      '--csv',
      csv,
      '--svg',
      svg,
      '--report',
      html,
      '--compare',
      BERT,
      '--set',
      'seed=3',
    );
    expect(r.code).toBe(0);
    expect(r.out.match(/strong scaling/g)).toHaveLength(2);
    const lines = readFileSync(csv, 'utf8').trimEnd().split('\n');
    expect(lines[0].split(',')).toEqual([...SCALE_CSV_COLUMNS]);
    expect(lines).toHaveLength(1 + 2 * 2);
    const chart = readFileSync(svg, 'utf8');
    expect(chart.match(/class="series"/g)).toHaveLength(2);
    const page = readFileSync(html, 'utf8');
    for (const s of ['scaling-chart', 'class="timeline"', 'memory-chart', '<table']) expect(page).toContain(s);
    expect(r.err).toContain(`wrote ${csv}`);
    // No progress bar when stderr is not a terminal: only the "wrote" lines.
    expect(
      r.err
        .trim()
        .split('\n')
        .every((l) => l.startsWith('wrote ')),
    ).toBe(true);
  });

  it('prints the warnings of every scenario swept, --compare files included, each naming its file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'scale-warn-'));
    // An HF config without training.seqLen: the config's longest sequence stands in for it, with a warning.
    const config = resolve('scenarios/models/llama2-7b.config.json');
    const files = ['a.yaml', 'b.yaml'].map((name, i) => {
      const f = join(dir, name);
      writeFileSync(
        f,
        `cluster: { preset: hgx-h200, nodes: ${i + 1} }\n` +
          `model: { hfConfig: ${config} }\n` +
          `training: { globalBatch: 16, microBatch: 1 }\n`,
      );
      return f;
    });
    const r = await cli('scale', files[0], '--compare', files[1], '--gpus', '8');
    expect(r.code).toBe(0);
    for (const f of files) expect(r.err).toContain(`clustersim: warning: ${f}: training.seqLen not given`);
    // One file alone: the warning as simulate prints it, without the file name.
    const single = await cli('scale', files[1], '--gpus', '8');
    expect(single.err).toMatch(/^clustersim: warning: training\.seqLen not given/m);
    // --json carries them, each with its file.
    const json = JSON.parse((await cli('scale', files[0], '--compare', files[1], '--gpus', '8', '--json')).out);
    expect(json.warnings).toEqual(
      files.map((file) => ({ file, message: expect.stringMatching(/^training\.seqLen not given/) })),
    );
    // A file not valid at its own size (tp 8 × pp 2 on one 8-GPU node) is swept from two nodes: its warnings print too,
    // as a --compare file and as the main one.
    const split = join(dir, 'split.yaml');
    writeFileSync(
      split,
      `cluster: { preset: hgx-h200, nodes: 1 }\n` +
        `model: { hfConfig: ${config} }\n` +
        `training: { globalBatch: 16, microBatch: 1 }\n` +
        `parallel: { tp: 8, pp: 2 }\n`,
    );
    for (const order of [
      [files[0], split],
      [split, files[0]],
    ]) {
      const both = await cli('scale', order[0], '--compare', order[1], '--gpus', '16');
      expect(both.code, both.err).toBe(0);
      for (const f of order) expect(both.err).toContain(`clustersim: warning: ${f}: training.seqLen not given`);
      expect(both.err.match(/^clustersim: warning: /gm)).toHaveLength(2);
    }
    // memory --json carries them too, as simulate --json does.
    const memory = JSON.parse((await cli('memory', files[0], '--json')).out);
    expect(memory.warnings).toEqual([expect.stringMatching(/^training\.seqLen not given/)]);
  });

  it('rejects a bad --gpus list with exit code 2', async () => {
    const r = await cli('scale', BERT, '--gpus', '8,lots');
    expect(r.code).toBe(2);
    expect(r.err).toContain("--gpus: 'lots' is not a GPU count");
  });

  it(
    'takes --megatron-args and --deepspeed-config as simulate does: ' + 'the sweep holds the imported split and batch',
    async () => {
      const llama = 'scenarios/imports/llama2-7b-a100-1node.yaml';
      const mg = await cli(
        'scale',
        llama,
        '--json',
        '--gpus',
        '8,16',
        '--megatron-args',
        '--tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 --micro-batch-size 1 --global-batch-size 32',
      );
      expect(mg.code, mg.err).toBe(0);
      const [series] = JSON.parse(mg.out).series as {
        tp: number;
        pp: number;
        rows: { gpus: number; dp: number; globalBatch: number }[];
      }[];
      expect([series.tp, series.pp]).toEqual([2, 2]);
      expect(series.rows.map((r) => [r.gpus, r.dp, r.globalBatch])).toEqual([
        [8, 2, 32],
        [16, 4, 32],
      ]);
      // The same import through simulate at 8 GPUs gives the sweep's first step time.
      const sim = JSON.parse(
        (
          await cli(
            'simulate',
            llama,
            '--json',
            '--alternatives',
            '0',
            '--megatron-args',
            '--tensor-model-parallel-size 2 --pipeline-model-parallel-size ' +
              '2 --micro-batch-size 1 --global-batch-size 32',
          )
        ).out,
      );
      expect((series.rows[0] as unknown as { stepTimeS: number }).stepTimeS).toBeCloseTo(sim.stepTimeS, 9);
      const ds = await cli(
        'scale',
        llama,
        '--json',
        '--gpus',
        '8,16',
        '--deepspeed-config',
        'scenarios/imports/ds_config.json',
      );
      expect(ds.code, ds.err).toBe(0);
      expect(JSON.parse(ds.out).series[0].rows[0].globalBatch).toBe(
        JSON.parse(readFileSync('scenarios/imports/ds_config.json', 'utf8')).train_batch_size,
      );
      // Its gradient_accumulation_steps holds at one size only when the batch is kept (strong), not per replica (weak).
      expect(
        JSON.parse(ds.out)
          .warnings.map((w: { message: string }) => w.message)
          .join('\n'),
      ).toMatch(
        /gradient_accumulation_steps 4 holds at one data-parallel size only; strong scaling keeps the global batch/,
      );
      const weak = await cli(
        'scale',
        llama,
        '--json',
        '--gpus',
        '8,16',
        '--mode',
        'weak',
        '--deepspeed-config',
        'scenarios/imports/ds_config.json',
      );
      expect(weak.err).not.toMatch(/gradient_accumulation_steps/);
      const bad = await cli('scale', llama, '--gpus', '8,16', '--megatron-args', '--tensor-model-parallel-size two');
      expect(bad.code).toBe(2);
      expect(bad.err).toContain('--tensor-model-parallel-size');
    },
  );

  it('rejects a scenario that is itself invalid with exit code 2', async () => {
    const r = await cli('scale', BERT, '--gpus', '8', '--set', 'cluster.preset=nope');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/unknown node preset 'nope'/);
  });

  it('says when a GPU speed spread is set, since the efficiency then includes the loss to slower GPUs', async () => {
    const r = await cli(
      'scale',
      'scenarios/bert-large-ddp-2node.yaml',
      '--gpus',
      '8..16',
      '--set',
      'noise.gpuSpeedSpread=0.05',
      '--json',
    );
    const doc = JSON.parse(r.out);
    expect(doc.warnings.map((w: { message: string }) => w.message).join('\n')).toMatch(
      /noise.gpuSpeedSpread 5.0%: each size runs at the expected slowest of its GPUs/,
    );
    // The larger size waits for the slower of more GPUs: its efficiency falls below the run without a spread.
    const plain = JSON.parse(
      (await cli('scale', 'scenarios/bert-large-ddp-2node.yaml', '--gpus', '8..16', '--json')).out,
    );
    expect(doc.series[0].rows[1].efficiency).toBeLessThan(plain.series[0].rows[1].efficiency);
  });
});
