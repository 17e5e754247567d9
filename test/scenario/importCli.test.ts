import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cli } from '../helpers/cli.js';
import { scenarioWithImports } from '../../src/scenario/importSettings.js';

/**
 * A Megatron-LM GPT-3 175B launch as people paste it (after examples/gpt3/train_gpt3_175b_distributed.sh,
 * with the SC21 split: TP 8, PP 16, interleaved with 2 layers per virtual stage, sequence parallel, bf16).
 */
const PASTED = `torchrun --nproc_per_node 8 --nnodes 128 --node_rank $NODE_RANK pretrain_gpt.py \\
    --tensor-model-parallel-size 8 \\
    --pipeline-model-parallel-size 16 \\
    --num-layers-per-virtual-pipeline-stage 2 \\
    --sequence-parallel \\
    --use-distributed-optimizer --overlap-grad-reduce \\
    --num-layers 96 --hidden-size 12288 --num-attention-heads 96 \\
    --seq-length 2048 --max-position-embeddings 2048 \\
    --micro-batch-size 1 --global-batch-size 1536 \\
    --recompute-activations --use-flash-attn --bf16 \\
    --attention-backend=flash --no-such-megatron-flag 1 \\
    --lr 6.0e-5 --min-lr 6.0e-6 --weight-decay 0.1 --clip-grad 1.0 \\
    --data-path "$DATA_PATH" --vocab-file gpt2-vocab.json --merge-file gpt2-merges.txt --split 949,50,1`;

describe('clustersim simulate --megatron-args / --deepspeed-config', () => {
  it(
    'builds the TP 8 × PP 16 × DP 8 interleaved split from a ' +
      'pasted GPT-3 175B Megatron command line and lists what it took',
    async () => {
      // --set comes after the import: 128 sequences (16 micro-batches per pipeline) keep the test quick.
      const { code, out, err } = await cli(
        'simulate',
        'scenarios/imports/gpt3-175b-a100.yaml',
        '--megatron-args',
        PASTED,
        '--set',
        'training.globalBatch=128',
      );
      expect(err).toMatch(/warning: --megatron-args: unknown Megatron flags, ignored: --no-such-megatron-flag/);
      expect(code).toBe(0);
      // Megatron pads the GPT-2 vocabulary (51,200, not the preset's 50,257), so the model is no longer the preset's.
      expect(out).toContain('gpt3-175b (modified) on 128× dgx-a100-80gb (1024 GPUs)');
      expect(out).toMatch(
        /split\s+tp 8 × pp 16 × dp 8, interleaved \(3 chunks\/stage\), ZeRO-1, sequence parallel, selective recompute/,
      );
      expect(out).toContain('16 micro-batch(es) per step');
      expect(out).toContain("taken from --megatron-args (* = Megatron's default where the input is silent):");
      expect(out).toMatch(
        /parallel\s+tp 8, pp 16, cp 1\*, schedule interleaved, virtualStages 3, sequenceParallel true/,
      );
      expect(out).toMatch(/globalBatch 1536 \(overridden by --set\)/);
      expect(out).toMatch(/vocab 51200/);
    },
    120_000,
  );

  it(
    'marks in the Megatron summary what the DeepSpeed config overrode, ' +
      'and a --sequence-parallel Megatron turned off as given',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'clustersim-both-'));
      const ds = join(dir, 'ds.json');
      writeFileSync(
        ds,
        JSON.stringify({
          train_batch_size: 64,
          train_micro_batch_size_per_gpu: 2,
          bf16: { enabled: true },
          zero_optimization: { stage: 1 },
        }),
      );
      const { code, out } = await cli(
        'simulate',
        'scenarios/imports/llama2-7b-a100-1node.yaml',
        '--alternatives',
        '0',
        '--megatron-args',
        '--tensor-model-parallel-size 1 --sequence-parallel --micro-batch-size 4 --global-batch-size 128',
        '--deepspeed-config',
        ds,
      );
      expect(code).toBe(0);
      const megatron = out.slice(
        out.indexOf('taken from --megatron-args'),
        out.indexOf('taken from --deepspeed-config'),
      );
      expect(megatron).toMatch(/microBatch 4 \(overridden by --deepspeed-config\)/);
      expect(megatron).toMatch(/zero 0\* \(overridden by --deepspeed-config\)/);
      // The same value from both is not an override.
      expect(megatron).toMatch(/offload none\*,/);
      // Given, then turned off at tp 1: not Megatron's default where the input is silent.
      expect(megatron).toMatch(/sequenceParallel false,/);
      // --json says the same.
      const json = JSON.parse(
        (
          await cli(
            'simulate',
            'scenarios/imports/llama2-7b-a100-1node.yaml',
            '--alternatives',
            '0',
            '--json',
            '--megatron-args',
            '--tensor-model-parallel-size 1 --micro-batch-size 4 --global-batch-size 128',
            '--deepspeed-config',
            ds,
          )
        ).out,
      );
      const fields = json.imports[0].fields as { path: string; overriddenBy?: string }[];
      expect(fields.find((f) => f.path === 'training.microBatch')?.overriddenBy).toBe('--deepspeed-config');
      expect(fields.find((f) => f.path === 'parallel.offload')?.overriddenBy).toBeUndefined();
    },
  );

  it(
    'Megatron-DeepSpeed (both imports): ' +
      "the DeepSpeed engine reduces 2-byte gradients, so Megatron's fp32 main_grad is undone",
    async () => {
      const args = [
        'simulate',
        'scenarios/imports/llama2-7b-a100-1node.yaml',
        '--megatron-args',
        '--bf16 --micro-batch-size 2 --global-batch-size 64',
        '--json',
        '--alternatives',
        '0',
      ];
      const megatron = JSON.parse((await cli(...args)).out);
      const both = JSON.parse((await cli(...args, '--deepspeed-config', 'scenarios/imports/ds_config.json')).out);
      const field = (r: { imports: { fields: { path: string; value: unknown }[] }[] }) =>
        r.imports
          .flatMap((i) => i.fields)
          .filter((f) => f.path === 'parallel.fp32Gradients')
          .map((f) => f.value);
      expect(field(megatron)).toEqual([true]);
      expect(field(both).at(-1)).toBe(false);
    },
  );

  it('turns a DeepSpeed config with ZeRO-3 and CPU offload into zero 3 / offload cpu', async () => {
    const { code, out } = await cli(
      'simulate',
      'scenarios/imports/llama2-7b-a100-1node.yaml',
      '--deepspeed-config',
      'scenarios/imports/ds_config.json',
      '--json',
    );
    expect(code).toBe(0);
    const r = JSON.parse(out);
    expect(r.parallel).toMatchObject({ zero: 3, tp: 1, pp: 1, dp: 8 });
    expect(r.microBatchesPerStep).toBe(4); // 64 = 2 per GPU × 4 accumulation steps × dp 8
    expect(r.memory.breakdown.optimizerBytes).toBe(0); // offload cpu: the optimizer state lives on the host
    const summary = await cli(
      'simulate',
      'scenarios/imports/llama2-7b-a100-1node.yaml',
      '--deepspeed-config',
      'scenarios/imports/ds_config.json',
    );
    expect(summary.out).toMatch(/taken from --deepspeed-config[^\n]*\n(.*\n)*\s+parallel\s+zero 3, offload cpu/);
    // The JSON document carries what the import set as data, not the summary's text.
    expect(out).not.toContain('taken from');
    expect(r.imports).toEqual([expect.objectContaining({ source: '--deepspeed-config', warnings: expect.any(Array) })]);
    expect(r.imports[0].fields).toContainEqual({
      path: 'parallel.zero',
      value: 3,
      from: 'zero_optimization.stage',
      byDefault: false,
      overriddenBySet: false,
    });
    expect(r.memory.host.fits).toBe(true); // offload: the host memory verdict is there too
    const plain = JSON.parse(
      (await cli('simulate', 'scenarios/imports/llama2-7b-a100-1node.yaml', '--json', '--alternatives', '0')).out,
    );
    expect(plain.imports).toBeUndefined();
  });

  it('reads the arguments from a file with @file, the same as pasted', () => {
    const fromFile = scenarioWithImports('scenarios/imports/gpt3-175b-a100.yaml', {
      megatronArgs: '@scenarios/imports/megatron-args.txt',
    });
    const pasted = scenarioWithImports('scenarios/imports/gpt3-175b-a100.yaml', {
      megatronArgs: readFileSync('scenarios/imports/megatron-args.txt', 'utf8'),
    });
    expect(fromFile.scenario).toEqual(pasted.scenario);
    expect(fromFile.scenario.parallel).toMatchObject({
      tp: 8,
      pp: 16,
      dp: 8,
      schedule: 'interleaved',
      virtualStages: 3,
      sequenceParallel: true,
      zero: 1,
      recompute: 'selective',
    });
    expect(fromFile.scenario.training).toMatchObject({ globalBatch: 1536, microBatch: 1, precision: 'bf16' });
  });

  it('exits with code 2 and names the flag or field on bad input', async () => {
    const missing = await cli(
      'simulate',
      'scenarios/imports/gpt3-175b-a100.yaml',
      '--megatron-args',
      '--tensor-model-parallel-size 8 --pipeline-model-parallel-size',
    );
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/--megatron-args: 1 problem:\n  --pipeline-model-parallel-size: needs a value/);
    const badTp = await cli(
      'simulate',
      'scenarios/imports/gpt3-175b-a100.yaml',
      '--megatron-args',
      '--tensor-model-parallel-size 5',
    );
    expect(badTp.code).toBe(2);
    expect(badTp.err).toMatch(
      new RegExp(
        /parallel.tp: 5 does not divide heads \(96\) \[parallel.tp 5 from --megatron-args: /.source +
          /--tensor-model-parallel-size 5\]/.source,
      ),
    );
    // dp cannot be derived from a split that does not divide the GPUs: no follow-on batch problem built on it.
    expect(badTp.err).not.toMatch(/training.globalBatch/);
    // Short field names in a message (pp) are tied to the flag that gave them.
    const badBatch = await cli(
      'simulate',
      'scenarios/imports/gpt3-175b-a100.yaml',
      '--megatron-args',
      '@scenarios/imports/megatron-args.txt',
      '--set',
      'training.globalBatch=1544',
    );
    expect(badBatch.err).toMatch(
      new RegExp(
        /multiple of pp \(16\).*parallel\.pp 16 from --megatron-args: /.source +
          /--pipeline-model-parallel-size 16.*from --set training\.globalBatch=1544\]/.source,
      ),
    );
    const badVirtual = await cli(
      'simulate',
      'scenarios/imports/gpt3-175b-a100.yaml',
      '--megatron-args',
      '--pipeline-model-parallel-size 16 --virtual-pipeline-model-parallel-size 4',
    );
    expect(badVirtual.code).toBe(2);
    expect(badVirtual.err).toMatch(
      new RegExp(
        /96 layers do not split evenly over 64 model chunks .*parallel.virtualStages /.source +
          /4 from --megatron-args: --virtual-pipeline-model-parallel-size 4\]/.source,
      ),
    );
    const noFile = await cli(
      'simulate',
      'scenarios/imports/llama2-7b-a100-1node.yaml',
      '--deepspeed-config',
      'scenarios/imports/missing.json',
    );
    expect(noFile.code).toBe(2);
    expect(noFile.err).toMatch(/cannot read DeepSpeed config 'scenarios\/imports\/missing.json'/);
  });

  it('lists every bad field of a DeepSpeed config in one error, exit code 2, no stack trace', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'clustersim-ds-bad-'));
    try {
      const path = join(dir, 'ds.json');
      writeFileSync(
        path,
        JSON.stringify({
          train_micro_batch_size_per_gpu: 0,
          zero_optimization: { stage: 'two', overlap_comm: 'on', offload_optimizer: { device: 'gpu' } },
        }),
      );
      const { code, out, err } = await cli(
        'simulate',
        'scenarios/imports/llama2-7b-a100-1node.yaml',
        '--deepspeed-config',
        path,
      );
      expect(code).toBe(2);
      expect(out).toBe('');
      expect(err).toContain(`--deepspeed-config '${path}': 4 problems:`);
      expect(err).toMatch(/^ {2}train_micro_batch_size_per_gpu: expected a positive whole number or "auto", got 0$/m);
      expect(err).toMatch(/^ {2}zero_optimization\.stage: expected 0, 1, 2 or 3, got "two"$/m);
      expect(err).toMatch(/^ {2}zero_optimization\.overlap_comm: expected true, false or "auto", got "on"$/m);
      expect(err).toMatch(/^ {2}zero_optimization\.offload_optimizer\.device: expected "cpu" or "none", got "gpu"$/m);
      expect(err).not.toMatch(/internal error|^\s+at /m);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
