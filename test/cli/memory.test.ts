import { describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli.js';

interface StageJson {
  stage: number;
  layers: number;
  paramsPerRank: number;
  passesInFlight: number;
  fits: boolean;
  weightsBytes: number;
  gradientsBytes: number;
  optimizerBytes: number;
  activationsBytes: number;
  buffersBytes: number;
  reserveBytes: number;
  totalBytes: number;
}

describe('clustersim memory', () => {
  it('prints one row per pipeline stage with every part, the total against capacity and the verdict', async () => {
    const { code, out } = await cli('memory', 'scenarios/llama2-70b-zero2-8xa100.yaml');
    expect(code).toBe(0);
    for (const s of [
      'stage',
      'layers',
      'params/GPU',
      'weights',
      'gradients',
      'optimizer',
      'activations',
      'buffers',
      'reserve',
      'total',
      'verdict',
    ])
      expect(out).toContain(s);
    expect(out).toMatch(/OOM by \d+ GiB/);
    expect(out).toContain('Does not fit: 1 of 1 stage(s) exceed 80.0 GiB.');
  });

  it(
    'follows the mixed-precision Adam account with ZeRO-2 over 8 ranks: ' +
      '2P weights, 2P/8 gradients, 12P/8 optimizer',
    async () => {
      const j = JSON.parse((await cli('memory', 'scenarios/llama2-70b-zero2-8xa100.yaml', '--json')).out);
      const [s] = j.stages as StageJson[];
      expect(j.fits).toBe(false);
      expect(s.weightsBytes).toBe(2 * s.paramsPerRank);
      expect(s.gradientsBytes).toBeCloseTo((2 * s.paramsPerRank) / 8, -3);
      expect(s.optimizerBytes).toBeCloseTo((12 * s.paramsPerRank) / 8, -3);
    },
  );

  it(
    'with ZeRO-3 and CPU offload shows the sharded parameters per GPU, ' +
      'the host memory per node, and both shortfalls in --json',
    async () => {
      const args = [
        'memory',
        'scenarios/llama2-70b-zero2-8xa100.yaml',
        '--set',
        'parallel.zero=3',
        '--set',
        'parallel.offload=cpu',
      ];
      const { code, out } = await cli(...args);
      expect(code).toBe(0);
      const j = JSON.parse((await cli(...args, '--json')).out);
      const [s] = j.stages as (StageJson & { shortfallBytes: number; hostBytes: number })[];
      expect(out).toContain(`${(s.paramsPerRank / 8 / 1e9).toFixed(2)}B`);
      // --json gives the same held share as the text, next to the unsharded count.
      expect((s as unknown as { paramsHeldPerGpu: number }).paramsHeldPerGpu).toBe(s.paramsPerRank / 8);
      expect(out).toMatch(
        new RegExp(
          /Host memory for CPU offload \(optimizer state, fp32 gradients and 16-bit partitions\): /.source +
            /[\d.]+ TiB on the fullest node of 2\.00 TiB: fits/.source,
        ),
      );
      // ZeRO-3 offload: fp32 master, momentum, variance, fp32 gradient and the bf16
      // gradient-accumulation partition (stage3.py).
      expect(s.hostBytes).toBeCloseTo((18 * s.paramsPerRank) / 8, -3);
      expect(j.host.bytesPerNode).toBeCloseTo(8 * s.hostBytes, -3);
      expect(j.host.fits).toBe(true);
      expect(j.shortfallBytes).toBe(0);
      const oom = JSON.parse((await cli('memory', 'scenarios/llama2-70b-zero2-8xa100.yaml', '--json')).out);
      expect(oom.shortfallBytes).toBe(oom.stages[0].totalBytes - oom.capacityBytes);
      expect(oom.host).toBeUndefined();
    },
  );

  it('notes when tensor parallelism spans nodes, as simulate does', async () => {
    const across = await cli(
      'memory',
      'scenarios/gpt3-175b-1024xa100.yaml',
      '--set',
      'parallel.tp=16',
      '--set',
      'parallel.dp=8',
      '--set',
      'parallel.pp=8',
    );
    expect(across.code, across.err).toBe(0);
    expect(across.out).toContain(
      'Note: tp 16 exceeds the 8 GPUs of a node, so tensor-parallel collectives cross the NICs',
    );
    expect((await cli('memory', 'scenarios/gpt3-175b-1024xa100.yaml')).out).not.toContain('cross the NICs');
  });

  it('gives every stage of a pipeline its own account, and simulate --json carries the same per stage', async () => {
    const file = 'scenarios/gpt3-175b-1024xa100.yaml';
    const mem = JSON.parse((await cli('memory', file, '--json')).out);
    const stages = mem.stages as StageJson[];
    expect(stages.map((s) => s.stage)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    for (const s of stages) {
      expect(s.totalBytes).toBe(
        s.weightsBytes + s.gradientsBytes + s.optimizerBytes + s.activationsBytes + s.buffersBytes + s.reserveBytes,
      );
      expect(s.fits).toBe(s.totalBytes <= mem.capacityBytes);
    }
    // The embedding makes the first stage the heaviest in weights; interleaved 1F1B keeps
    // the most passes in flight there.
    expect(stages[0].weightsBytes).toBeGreaterThan(stages[1].weightsBytes);
    for (let i = 1; i < stages.length; i++) expect(stages[i].passesInFlight).toBeLessThan(stages[i - 1].passesInFlight);
    const sim = JSON.parse((await cli('simulate', file, '--json', '--alternatives', '0')).out);
    expect(sim.memory.perStage).toEqual(stages);
  });
  it('takes --deepspeed-config and --megatron-args as simulate does, and says what they set', async () => {
    const plain = JSON.parse((await cli('memory', 'scenarios/imports/llama2-7b-a100-1node.yaml', '--json')).out);
    const r = await cli(
      'memory',
      'scenarios/imports/llama2-7b-a100-1node.yaml',
      '--deepspeed-config',
      'scenarios/imports/ds_config.json',
    );
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/ZeRO-3 \+ CPU offload/);
    expect(r.out).toMatch(/taken from --deepspeed-config/);
    const imported = JSON.parse(
      (
        await cli(
          'memory',
          'scenarios/imports/llama2-7b-a100-1node.yaml',
          '--deepspeed-config',
          'scenarios/imports/ds_config.json',
          '--json',
        )
      ).out,
    );
    expect(imported.stages[0].optimizerBytes).toBe(0); // offloaded
    expect(imported.imports).toEqual([expect.objectContaining({ source: '--deepspeed-config' })]); // as simulate --json
    expect(plain.stages[0].optimizerBytes).toBeGreaterThan(0);
    const megatron = JSON.parse(
      (
        await cli(
          'memory',
          'scenarios/imports/gpt3-175b-a100.yaml',
          '--megatron-args',
          '--tensor-model-parallel-size 8 --pipeline-model-parallel-size ' +
            '16 --bf16 --micro-batch-size 1 --global-batch-size 128',
          '--json',
        )
      ).out,
    );
    expect(megatron.stages).toHaveLength(16);
  });

  it('shows the optimizer state types when they are not fp32, in text, in --json, and in simulate', async () => {
    const set = ['--set', 'training.optimizerState.momentum=bf16', '--set', 'training.optimizerState.variance=bf16'];
    const plain = JSON.parse((await cli('memory', 'scenarios/llama2-70b-zero2-8xa100.yaml', '--json')).out);
    const reduced = JSON.parse((await cli('memory', 'scenarios/llama2-70b-zero2-8xa100.yaml', ...set, '--json')).out);
    expect(plain.optimizerState).toBeUndefined();
    expect(reduced.optimizerState).toEqual({ masterWeights: 'fp32', momentum: 'bf16', variance: 'bf16' });
    // Master 4 + momentum 2 + variance 2 bytes per parameter in place of 4 + 4 + 4.
    expect(reduced.stages[0].optimizerBytes / plain.stages[0].optimizerBytes).toBeCloseTo(8 / 12, 9);
    expect((await cli('memory', 'scenarios/llama2-70b-zero2-8xa100.yaml', ...set)).out).toMatch(
      /optimizer state momentum bf16, variance bf16/,
    );
    const sim = await cli('simulate', 'scenarios/llama2-70b-zero2-8xa100.yaml', '--alternatives', '0', ...set);
    expect(sim.out).toMatch(/optimizer [\d.]+ GiB \(momentum bf16, variance bf16\)/);
  });
});
