import { describe, expect, it } from 'vitest';
import { importMegatronArgs } from '../../src/scenario/importMegatron.js';
import { toSetArgs, type ImportResult } from '../../src/scenario/importResult.js';
import { applyOverrides } from '../../src/scenario/load.js';
import { resolveScenario } from '../../src/scenario/resolve.js';
import { ScenarioError } from '../../src/sim/errors.js';
import { InvalidScenarioError } from '../../src/scenario/errors.js';
import { MiB } from '../../src/sim/engine/units.js';
import { stageMemories } from '../../src/sim/memory/stageMemory.js';

/** GPT-3 175B as Megatron-LM trains it (SC21 Table 1), pasted from a launch script. */
const GPT3_175B = `
torchrun --nproc_per_node 8 --nnodes 128 --master_addr $MASTER_ADDR pretrain_gpt.py \\
    --tensor-model-parallel-size 8 \\
    --pipeline-model-parallel-size 16 \\
    --num-layers-per-virtual-pipeline-stage 2 \\
    --sequence-parallel \\
    --use-distributed-optimizer \\
    --overlap-grad-reduce \\
    --num-layers 96 --hidden-size 12288 --num-attention-heads 96 \\
    --seq-length 2048 --max-position-embeddings 2048 \\
    --micro-batch-size 1 --global-batch-size 1536 \\
    --rampup-batch-size 16 16 5859375 \\
    --recompute-activations \\
    --use-flash-attn \\
    --bf16 \\
    --lr 6.0e-5 --min-lr 6.0e-6 --lr-decay-style cosine   # learning rate: no effect on a step
    --data-path "$DATA_PATH" --vocab-file gpt2-vocab.json --merge-file gpt2-merges.txt --split 949,50,1 \\
    --save '/checkpoints/gpt3 175b' 2>&1 | tee train.log
`;

/** The fields of an import as a path → value map. */
function fieldsOf(r: ImportResult): Record<string, unknown> {
  return Object.fromEntries(r.fields.map((f) => [f.path, f.value]));
}

function errorOf(f: () => unknown): ScenarioError {
  try {
    f();
  } catch (err) {
    if (err instanceof ScenarioError) return err;
    throw err;
  }
  throw new Error('expected a ScenarioError');
}

describe('importMegatronArgs', () => {
  it(
    'reads a pasted GPT-3 175B launch script into the ' + 'interleaved TP 8 × PP 16 strategy, the model and the batch',
    () => {
      const r = importMegatronArgs(GPT3_175B, { gpus: 1024 });
      expect(fieldsOf(r)).toMatchObject({
        'parallel.tp': 8,
        'parallel.pp': 16,
        'parallel.schedule': 'interleaved',
        'parallel.virtualStages': 3, // 96 layers / pp 16 / 2 layers per virtual stage
        'parallel.sequenceParallel': true,
        'parallel.recompute': 'selective',
        'parallel.zero': 1,
        'parallel.offload': 'none',
        'parallel.ddp.overlap': true,
        'parallel.zeroConfig.overlapComm': true,
        // --use-distributed-optimizer is Megatron's own ZeRO-1, reducing in its DDP buckets.
        'parallel.zeroConfig.stage1': 'megatron',
        'model.arch': 'gpt',
        'model.layers': 96,
        'model.hidden': 12288,
        'model.heads': 96,
        'model.kvHeads': 96,
        'model.ffnHidden': 4 * 12288,
        'model.tiedEmbeddings': true,
        'model.vocab': 51200, // GPT-2 BPE 50257 padded to a multiple of 128 × tp 8
        'model.seqLen': 2048,
        'training.seqLen': 2048,
        'training.microBatch': 1,
        'training.globalBatch': 1536,
        'training.precision': 'bf16',
        'training.flashAttention': true,
      });
      // Megatron derives dp from the world size, so a dp the scenario gave is dropped.
      expect(r.fields.find((f) => f.path === 'parallel.dp')).toMatchObject({ value: undefined, byDefault: true });
      expect(r.warnings.join('\n')).toMatch(/--rampup-batch-size 16 16 5859375: not modelled/);
      expect(r.warnings.join('\n')).not.toMatch(/unknown Megatron flags/);
    },
  );

  it('gives overrides that resolve, with the scenario file, to tp 8 × pp 16 × dp 8 on 1,024 GPUs', () => {
    const file = {
      cluster: { preset: 'dgx-a100-80gb', nodes: 128 },
      model: { preset: 'gpt3-175b' },
      training: { globalBatch: 64 },
      parallel: { dp: 1024 },
    };
    const r = importMegatronArgs(GPT3_175B, { gpus: 1024 });
    const raw = applyOverrides(file, toSetArgs(r.fields)) as { parallel: Record<string, unknown> };
    delete raw.parallel.dp; // the removal the import asks for
    const s = resolveScenario(raw, 'gpt3.yaml', process.cwd());
    expect([s.parallel.tp, s.parallel.pp, s.parallel.dp]).toEqual([8, 16, 8]);
    expect(s.parallel.schedule).toBe('interleaved');
    expect(s.parallel.virtualStages).toBe(3);
    expect(s.training.globalBatch / (s.training.microBatch * s.parallel.dp)).toBe(192);
  });

  it('reads --flag=value the same as --flag value', () => {
    const spaced = fieldsOf(
      importMegatronArgs(
        '--tensor-model-parallel-size 4 --num-layers 32 --recompute-granularity ' +
          'full --recompute-method uniform --recompute-num-layers 1',
      ),
    );
    const joined = fieldsOf(
      importMegatronArgs(
        '--tensor-model-parallel-size=4 --num-layers=32 --recompute-granularity=full ' +
          '--recompute-method=uniform --recompute-num-layers=1',
      ),
    );
    expect(joined).toEqual(spaced);
    expect(spaced['parallel.tp']).toBe(4);
    expect(spaced['parallel.recompute']).toBe('full');
  });

  it('reads --context-parallel-size into parallel.cp and derives dp from GPUs / (tp × cp × pp)', () => {
    const r = importMegatronArgs(
      '--tensor-model-parallel-size 4 --pipeline-model-parallel-size 4 --context-parallel-size 2 --micro-batch-size 1',
      { gpus: 64 },
    );
    const f = fieldsOf(r);
    expect(f['parallel.cp']).toBe(2);
    expect(f['training.globalBatch']).toBe(2);
    expect(r.warnings.join('\n')).not.toMatch(/context-parallel/);
    expect(r.fields.find((x) => x.path === 'parallel.dp')?.from).toMatch(/GPUs \/ \(tp × cp × pp\)/);
  });

  it('reads --tp-comm-overlap (Transformer Engine userbuffers) and says its config file is not read', () => {
    const r = importMegatronArgs(
      '--tensor-model-parallel-size 4 --sequence-parallel --tp-comm-overlap --tp-comm-overlap-cfg ub.yaml',
    );
    expect(fieldsOf(r)).toMatchObject({ 'parallel.tpCommOverlap': true, 'parallel.sequenceParallel': true });
    expect(r.warnings.join('\n')).toContain(
      '--tp-comm-overlap-cfg ub.yaml: not modelled; the userbuffers config file is not read; ' +
        "Transformer Engine's default SMs per overlap are used (set parallel.tpCommOverlapSms)",
    );
    expect(fieldsOf(importMegatronArgs('--tensor-model-parallel-size 4'))['parallel.tpCommOverlap']).toBe(false);
    // Megatron turns sequence parallelism off at tp 1 (a warning), then refuses the overlap without it (validate_args).
    const tp1 = importMegatronArgs(
      '--tensor-model-parallel-size 1 --context-parallel-size 2 --sequence-parallel --disable-tp-comm-overlap-rs',
    );
    expect(fieldsOf(tp1)).toMatchObject({ 'parallel.sequenceParallel': false, 'parallel.tpCommOverlap': false });
    expect(tp1.warnings.join('\n')).toContain(
      '--sequence-parallel: turned off, as Megatron does, because tensor parallelism is off',
    );
    expect(tp1.warnings.join('\n')).toContain(
      '--disable-tp-comm-overlap-rs: not modelled; every pipelined reduce-scatter is simulated overlapped',
    );
    expect(tp1.warnings.join('\n')).not.toMatch(/unknown Megatron flags/);
    expect(() => importMegatronArgs('--tensor-model-parallel-size 1 --sequence-parallel --tp-comm-overlap')).toThrow(
      new RegExp(
        /--tp-comm-overlap without sequence parallelism \(Megatron /.source +
          /turns --sequence-parallel off at tp 1\): Megatron refuses it/.source,
      ),
    );
    expect(() => importMegatronArgs('--tensor-model-parallel-size 4 --tp-comm-overlap')).toThrow(
      /--tp-comm-overlap without sequence parallelism: Megatron refuses it .*add --sequence-parallel with tp > 1/,
    );
  });

  it(
    'refuses what Megatron refuses: ' +
      'a recompute method with selective recompute, query groups that tp does not divide',
    () => {
      expect(() =>
        importMegatronArgs('--recompute-activations --recompute-granularity full --recompute-method uniform'),
      ).toThrow(/--recompute-activations \(selective recompute\) with --recompute-method uniform: Megatron refuses it/);
      // Neither a multiple of the other: refused. tp a multiple of the groups: taken since
      // NVIDIA/Megatron-LM#2565 (core 0.16).
      expect(() =>
        importMegatronArgs(
          '--tensor-model-parallel-size 8 --num-attention-heads 64 --group-query-attention --num-query-groups 6',
        ),
      ).toThrow(/--group-query-attention with 6 query group\(s\) .* over tensor parallelism 8: Megatron refuses it/);
      expect(
        fieldsOf(
          importMegatronArgs(
            '--tensor-model-parallel-size 8 --num-attention-heads 64 --group-query-attention --num-query-groups 4',
          ),
        )['model.kvHeads'],
      ).toBe(4);
      expect(
        fieldsOf(
          importMegatronArgs(
            '--tensor-model-parallel-size 8 --num-attention-heads 64 --group-query-attention --num-query-groups 8',
          ),
        )['model.kvHeads'],
      ).toBe(8);
    },
  );

  it('reads --cp-comm-type (one value or one per layer), with both spellings of the gather', () => {
    const cp = (args: string) =>
      importMegatronArgs(`--context-parallel-size 2 ${args} --micro-batch-size 1`, { gpus: 8 });
    expect(fieldsOf(cp(''))['parallel.cpCommType']).toBe('p2p');
    expect(fieldsOf(importMegatronArgs('--tensor-model-parallel-size 2'))['parallel.cpCommType']).toBeUndefined();
    expect(fieldsOf(cp('--cp-comm-type a2a'))['parallel.cpCommType']).toBe('a2a');
    for (const gather of ['all_gather', 'allgather']) {
      const r = cp(`--cp-comm-type ${gather}`);
      expect(fieldsOf(r)['parallel.cpCommType']).toBe('all_gather');
      expect(r.fields.find((x) => x.path === 'parallel.cpCommType')?.from).toBe(`--cp-comm-type ${gather}`);
      expect(r.warnings.join('\n')).not.toMatch(/cp-comm-type/);
    }
    // A list per layer (nargs '+'): its most common value, with a warning; the next flag is still read.
    const list = cp('--cp-comm-type a2a p2p a2a --tensor-model-parallel-size 2');
    expect(fieldsOf(list)).toMatchObject({ 'parallel.cpCommType': 'a2a', 'parallel.tp': 2 });
    expect(list.warnings.join('\n')).toContain(
      '--cp-comm-type a2a p2p a2a: a type per layer is not modelled; every layer runs a2a',
    );
    const hier = cp('--cp-comm-type a2a+p2p --hierarchical-context-parallel-sizes 2 1');
    expect(fieldsOf(hier)['parallel.cpCommType']).toBe('p2p');
    expect(hier.warnings.join('\n')).toMatch(/a2a\+p2p: the hierarchical all-to-all .* simulated as the p2p ring/);
    expect(hier.warnings.join('\n')).toMatch(/--hierarchical-context-parallel-sizes 2 1: not modelled/);
    expect(importMegatronArgs('--cp-comm-type a2a').warnings.join('\n')).toContain(
      '--cp-comm-type a2a: ignored, context parallelism is off',
    );
    expect(errorOf(() => cp('--cp-comm-type ring')).message).toBe(
      "--megatron-args: --cp-comm-type has 'ring'; expected p2p, all_gather, a2a or a2a+p2p (one, or one per layer)",
    );
    expect(errorOf(() => cp('--cp-comm-type')).message).toMatch(/--cp-comm-type: needs a value/);
    // Its list ends at the first word that is not a type: an unexpanded variable after it is a stray word, as after
    // any flag; a value given with '=' takes no more words (argparse).
    const stray = cp('--cp-comm-type p2p ${EXTRA_ARGS}');
    expect(fieldsOf(stray)['parallel.cpCommType']).toBe('p2p');
    expect(stray.warnings.join('\n')).toContain(
      'shell variables are not expanded, so the flags they hold were not read: ${EXTRA_ARGS}',
    );
    const inline = cp('--cp-comm-type=a2a p2p');
    expect(fieldsOf(inline)['parallel.cpCommType']).toBe('a2a');
    expect(inline.warnings.join('\n')).toContain('words that belong to no flag, ignored: p2p');
    expect(errorOf(() => cp('--cp-comm-type $CP_TYPE')).message).toContain(
      "--cp-comm-type has '$CP_TYPE'; expected p2p, all_gather, " +
        'a2a or a2a+p2p (one, or one per layer) (shell variables are not expanded',
    );
    // a2a+p2p runs as the ring, so a list of it and p2p is one type.
    const mixed = cp('--cp-comm-type a2a+p2p p2p a2a');
    expect(fieldsOf(mixed)['parallel.cpCommType']).toBe('p2p');
    expect(mixed.fields.find((f) => f.path === 'parallel.cpCommType')?.from).toBe(
      '--cp-comm-type (p2p on 2 of 3 layers)',
    );
  });

  it(
    'takes --virtual-pipeline-model-parallel-size as the number of chunks, ' +
      'and rejects one that disagrees with the layers per virtual stage',
    () => {
      expect(
        fieldsOf(importMegatronArgs('--pipeline-model-parallel-size 4 --virtual-pipeline-model-parallel-size 2')),
      ).toMatchObject({ 'parallel.schedule': 'interleaved', 'parallel.virtualStages': 2 });
      const err = errorOf(() =>
        importMegatronArgs(
          '--num-layers 96 --pipeline-model-parallel-size 16 ' +
            '--num-layers-per-virtual-pipeline-stage 2 --virtual-pipeline-model-parallel-size 2',
        ),
      );
      expect(err.message).toMatch(
        /--virtual-pipeline-model-parallel-size 2 disagrees with --num-layers-per-virtual-pipeline-stage 2/,
      );
      expect(
        errorOf(() =>
          importMegatronArgs(
            '--num-layers 96 --pipeline-model-parallel-size 16 --num-layers-per-virtual-pipeline-stage 4',
          ),
        ).message,
      ).toMatch(/does not divide the 6 layers per pipeline stage/);
    },
  );

  it(
    "uses the scenario model's layer count for " +
      '--num-layers-per-virtual-pipeline-stage when the arguments omit --num-layers',
    () => {
      expect(
        fieldsOf(
          importMegatronArgs('--pipeline-model-parallel-size 8 --num-layers-per-virtual-pipeline-stage 2', {
            layers: 80,
          }),
        )['parallel.virtualStages'],
      ).toBe(5);
      expect(
        errorOf(() => importMegatronArgs('--pipeline-model-parallel-size 8 --num-layers-per-virtual-pipeline-stage 2'))
          .message,
      ).toMatch(/needs --num-layers/);
    },
  );

  it(
    "sets Megatron's defaults for the strategy where the arguments are " +
      'silent (no overlap, no sequence parallel, no recompute, plain DDP)',
    () => {
      const r = importMegatronArgs('--tensor-model-parallel-size 2 --micro-batch-size 4', { gpus: 16 });
      expect(fieldsOf(r)).toMatchObject({
        'parallel.pp': 1,
        'parallel.schedule': '1f1b',
        'parallel.virtualStages': 1,
        'parallel.sequenceParallel': false,
        'parallel.recompute': 'none',
        'parallel.zero': 0,
        'parallel.ddp.overlap': false,
        // --global-batch-size defaults to micro × dp = 4 × 16 / 2.
        'training.globalBatch': 32,
      });
      expect(r.fields.find((f) => f.path === 'parallel.ddp.overlap')?.byDefault).toBe(true);
      expect(r.fields.some((f) => f.path.startsWith('model.'))).toBe(false);
      expect(r.fields.some((f) => f.path === 'training.precision')).toBe(false);
      expect(r.warnings.join('\n')).toMatch(/neither --fp16 nor --bf16/);
    },
  );

  it(
    'sizes DDP buckets as Megatron does: --ddp-bucket-size parameters, ' +
      'default max(40M, 1M × dp), with no small first bucket',
    () => {
      // With --bf16 the buckets are fp32 main_grad buffers: 4 bytes per parameter.
      const byDefault = fieldsOf(
        importMegatronArgs('--tensor-model-parallel-size 8 --overlap-grad-reduce --bf16', { gpus: 1024 }),
      );
      expect(byDefault['parallel.ddp.bucketMB']).toBeCloseTo((128e6 * 4) / MiB, 2); // dp 128 → 128M parameters
      expect(byDefault['parallel.ddp.firstBucketMB']).toBe(byDefault['parallel.ddp.bucketMB']);
      const given = fieldsOf(importMegatronArgs('--ddp-bucket-size 10000000 --fp16'));
      expect(given['parallel.ddp.bucketMB']).toBeCloseTo((10e6 * 2) / MiB, 2);
      const bf16Reduce = fieldsOf(importMegatronArgs('--ddp-bucket-size 10000000 --bf16 --grad-reduce-in-bf16'));
      expect(bf16Reduce['parallel.ddp.bucketMB']).toBeCloseTo((10e6 * 2) / MiB, 2);
    },
  );

  it('takes --kv-channels as the width of a head (the projections map h to heads × kv_channels)', () => {
    expect(
      fieldsOf(importMegatronArgs('--num-layers 40 --hidden-size 5120 --num-attention-heads 32 --kv-channels 128'))[
        'model.headDim'
      ],
    ).toBe(128);
    expect(
      fieldsOf(importMegatronArgs('--num-layers 40 --hidden-size 5120 --num-attention-heads 32')),
    ).not.toHaveProperty('model.headDim');
  });

  it(
    'keeps gradients in fp32 as Megatron does with --bf16 (main_grad), ' +
      'or with --accumulate-allreduce-grads-in-fp32, not with --grad-reduce-in-bf16',
    () => {
      expect(fieldsOf(importMegatronArgs('--bf16'))['parallel.fp32Gradients']).toBe(true);
      expect(fieldsOf(importMegatronArgs('--fp16'))['parallel.fp32Gradients']).toBe(false);
      expect(
        fieldsOf(importMegatronArgs('--fp16 --accumulate-allreduce-grads-in-fp32'))['parallel.fp32Gradients'],
      ).toBe(true);
      expect(fieldsOf(importMegatronArgs('--bf16 --grad-reduce-in-bf16'))['parallel.fp32Gradients']).toBe(false);
      expect(importMegatronArgs('--bf16').warnings.join('\n')).not.toMatch(/traffic is half/);
    },
  );

  it(
    'reads the precision-aware optimizer: moments in their types, ' +
      'an fp32 master of bf16 weights kept as remainders',
    () => {
      const PA = '--use-distributed-optimizer --use-precision-aware-optimizer';
      const pa = importMegatronArgs(`--bf16 ${PA} --exp-avg-dtype bf16 --exp-avg-sq-dtype fp8`);
      expect(fieldsOf(pa)['training.optimizerState.masterWeights']).toBe('remainders');
      expect(fieldsOf(pa)['training.optimizerState.momentum']).toBe('bf16');
      expect(fieldsOf(pa)['training.optimizerState.variance']).toBe('fp8');
      // The remainders are Megatron's default (store_param_remainders), shown as such.
      expect(pa.fields.find((f) => f.path === 'training.optimizerState.masterWeights')?.byDefault).toBe(true);
      // store_param_remainders needs bf16 weights and an fp32 master; an fp16 master is kept as such.
      expect(
        fieldsOf(importMegatronArgs(`--bf16 ${PA} --main-params-dtype fp16`))['training.optimizerState.masterWeights'],
      ).toBe('fp16');
      expect(fieldsOf(importMegatronArgs(`--fp16 ${PA}`))['training.optimizerState.masterWeights']).toBe('fp32');
      // --main-grads-dtype bf16 keeps bf16 training's gradients in bf16 (arguments.py).
      expect(fieldsOf(importMegatronArgs(`--bf16 ${PA} --main-grads-dtype bf16`))['parallel.fp32Gradients']).toBe(
        false,
      );
      expect(fieldsOf(importMegatronArgs('--bf16 --main-grads-dtype fp32'))['parallel.fp32Gradients']).toBe(true);
    },
  );

  it('refuses what Megatron refuses around the precision-aware optimizer, and keeps an offloaded state in fp32', () => {
    // optimizer_config.py: "exp_avg_dtype can only be fp32 when not using precision-aware optimizer".
    expect(errorOf(() => importMegatronArgs('--bf16 --exp-avg-dtype bf16')).message).toMatch(
      /--exp-avg-dtype bf16: Megatron refuses any type but fp32 without --use-precision-aware-optimizer/,
    );
    expect(errorOf(() => importMegatronArgs('--bf16 --main-grads-dtype bf16')).message).toMatch(
      /--main-grads-dtype bf16: Megatron refuses/,
    );
    // Without the switch Megatron keeps fp32 state, and the import says so, replacing a reduced state in the file.
    expect(fieldsOf(importMegatronArgs('--bf16 --exp-avg-dtype fp32'))['training.optimizerState.momentum']).toBe(
      'fp32',
    );
    const file = {
      cluster: { preset: 'dgx-h100', nodes: 1 },
      model: { preset: 'llama2-7b' },
      training: { globalBatch: 8, optimizerState: { momentum: 'bf16', variance: 'bf16' } },
      parallel: {},
    };
    expect(
      resolveScenario(
        applyOverrides(file, toSetArgs(importMegatronArgs('--bf16 --use-distributed-optimizer').fields)),
        'a.yaml',
        process.cwd(),
      ).training.optimizerState,
    ).toBeUndefined();
    expect(
      errorOf(() =>
        importMegatronArgs('--bf16 --use-distributed-optimizer --use-precision-aware-optimizer --optimizer sgd'),
      ).message,
    ).toMatch(/only with adam/);
    expect(errorOf(() => importMegatronArgs('--bf16 --use-precision-aware-optimizer')).message).toMatch(
      /only with the distributed optimizer; add --use-distributed-optimizer/,
    );
    const offload = importMegatronArgs(
      '--bf16 --use-distributed-optimizer --use-precision-aware-optimizer --optimizer-cpu-offload --exp-avg-dtype bf16',
    );
    expect(offload.fields.filter((f) => f.path.startsWith('training.optimizerState')).map((f) => f.value)).toEqual([
      'fp32',
      'fp32',
      'fp32',
    ]);
    expect(offload.warnings.join('\n')).toMatch(
      /--exp-avg-dtype bf16: with --optimizer-cpu-offload the optimizer state on the host is simulated in fp32/,
    );
  });

  it(
    'gives a precision-aware optimizer that resolves, ' +
      'and halves the optimizer memory with bf16 moments and remainders',
    () => {
      const file = {
        cluster: { preset: 'dgx-h100', nodes: 1 },
        model: { preset: 'llama2-7b' },
        training: { globalBatch: 8 },
        parallel: {},
      };
      const plain = resolveScenario(
        applyOverrides(file, toSetArgs(importMegatronArgs('--bf16 --use-distributed-optimizer').fields)),
        'a.yaml',
        process.cwd(),
      );
      const pa = resolveScenario(
        applyOverrides(
          file,
          toSetArgs(
            importMegatronArgs(
              '--bf16 --use-distributed-optimizer --use-precision-aware-optimizer ' +
                '--exp-avg-dtype bf16 --exp-avg-sq-dtype bf16',
            ).fields,
          ),
        ),
        'a.yaml',
        process.cwd(),
      );
      expect(plain.training.optimizerState).toBeUndefined();
      expect(pa.training.optimizerState).toEqual({ masterWeights: 'remainders', momentum: 'bf16', variance: 'bf16' });
      const [a] = stageMemories(plain);
      const [b] = stageMemories(pa);
      expect(b.optimizerBytes / a.optimizerBytes).toBeCloseTo(6 / 12, 9);
    },
  );

  it(
    'reads recompute flags: --recompute-activations is selective; ' +
      'full with the block method is approximated, with a warning',
    () => {
      expect(fieldsOf(importMegatronArgs('--recompute-activations'))['parallel.recompute']).toBe('selective');
      const block = importMegatronArgs(
        '--num-layers 96 --pipeline-model-parallel-size 8 --recompute-granularity ' +
          'full --recompute-method block --recompute-num-layers 4',
      );
      expect(fieldsOf(block)['parallel.recompute']).toBe('full');
      expect(block.warnings.join('\n')).toMatch(
        /recomputes only the first 4 layer\(s\) of each pipeline stage; simulated as full recompute/,
      );
      const uniform = importMegatronArgs(
        '--recompute-granularity full --recompute-method uniform --recompute-num-layers 2',
      );
      expect(uniform.warnings.join('\n')).toMatch(/one input per 2 layers/);
      expect(errorOf(() => importMegatronArgs('--recompute-granularity partial')).message).toMatch(
        /--recompute-granularity: expected one of full, selective; got 'partial'/,
      );
    },
  );

  it('refuses full recompute without a method, as Megatron does, and warns when the layer count is missing', () => {
    const e = errorOf(() => importMegatronArgs('--num-layers 32 --recompute-granularity full'));
    expect(e.message).toContain('--recompute-granularity full without --recompute-method: Megatron refuses it');
    expect(e.message).toContain('add --recompute-method uniform --recompute-num-layers 1');
    const noCount = importMegatronArgs('--num-layers 32 --recompute-granularity full --recompute-method uniform');
    expect(fieldsOf(noCount)['parallel.recompute']).toBe('full');
    expect(noCount.warnings.join('\n')).toMatch(
      /without --recompute-num-layers: Megatron-core refuses it; taken as 1, older Megatron's default/,
    );
    // Selective recompute takes no method.
    expect(importMegatronArgs('--recompute-granularity selective').warnings.join('\n')).not.toMatch(
      /recompute-(method|num-layers)/,
    );
  });

  it(
    'reads a Llama-style model: SwiGLU and RMSNorm make the llama architecture, ' +
      'with GQA, untied embeddings and the padded vocabulary',
    () => {
      const r = importMegatronArgs(
        '--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --group-query-attention --num-query-groups 8 ' +
          '--swiglu --normalization RMSNorm --untie-embeddings-and-output-weights ' +
          '--disable-bias-linear --position-embedding-type rope ' +
          '--tokenizer-type Llama2Tokenizer --tensor-model-parallel-size ' +
          '2 --seq-length 4096 --max-position-embeddings 4096',
      );
      expect(fieldsOf(r)).toMatchObject({
        'model.arch': 'llama',
        'model.kvHeads': 8,
        'model.tiedEmbeddings': false,
        'model.ffnHidden': 10880, // int(4h·2/3 / 64)·64 for h = 4096
        'model.vocab': 32000, // already a multiple of 128 × tp 2
      });
      expect(r.warnings.join('\n')).not.toMatch(/unknown/);
      expect(fieldsOf(importMegatronArgs('--swiglu --num-layers 2'))['model.arch']).toBe('llama');
      expect(importMegatronArgs('--swiglu --num-layers 2').warnings.join('\n')).toMatch(
        /--swiglu without --normalization RMSNorm/,
      );
    },
  );

  it("reads --attention-backend fused as flash attention and says that it is cuDNN's kernel, to name on Hopper", () => {
    const fused = importMegatronArgs('--attention-backend fused');
    expect(fieldsOf(fused)['training.flashAttention']).toBe(true);
    expect(fused.warnings.join('\n')).toMatch(
      /--attention-backend fused runs cuDNN's fused attention: on Hopper add --set training.attentionKernel=cudnn/,
    );
    expect(importMegatronArgs('--attention-backend flash').warnings.join('\n')).not.toMatch(/cuDNN/);
    // --use-flash-attn decides first, as before the warning was added.
    expect(
      fieldsOf(importMegatronArgs('--use-flash-attn --attention-backend unfused'))['training.flashAttention'],
    ).toBe(true);
    expect(fieldsOf(importMegatronArgs('--attention-backend unfused'))['training.flashAttention']).toBe(false);
  });

  it('ignores --num-query-groups without --group-query-attention, as Megatron does', () => {
    const r = importMegatronArgs('--num-attention-heads 32 --num-query-groups 8');
    expect(fieldsOf(r)['model.kvHeads']).toBe(32);
    expect(r.warnings.join('\n')).toMatch(/--num-query-groups 8 without --group-query-attention: ignored/);
  });

  it('takes --padded-vocab-size as it is and pads --vocab-size', () => {
    expect(fieldsOf(importMegatronArgs('--padded-vocab-size 50304'))['model.vocab']).toBe(50304);
    expect(fieldsOf(importMegatronArgs('--vocab-size 50257 --tensor-model-parallel-size 4'))['model.vocab']).toBe(
      50688,
    );
  });

  it('reads --data-parallel-size and --optimizer when given', () => {
    expect(fieldsOf(importMegatronArgs('--data-parallel-size 4 --optimizer sgd'))).toMatchObject({
      'parallel.dp': 4,
      'training.optimizer': 'sgd',
    });
  });

  it('lists unknown flags in a warning instead of failing, and reads the flags around them', () => {
    const r = importMegatronArgs(
      '--tensor-model-parallel-size 2 --my-custom-flag 3 4 --another-one ' +
        '--pipeline-model-parallel-size 2 --first-last-layers-bf16',
    );
    expect(fieldsOf(r)).toMatchObject({ 'parallel.tp': 2, 'parallel.pp': 2 });
    expect(r.warnings).toContain('unknown Megatron flags, ignored: --my-custom-flag --another-one');
    expect(r.warnings.join('\n')).toMatch(/--first-last-layers-bf16: not modelled/);
  });

  it('reads the FP8 flags: --fp8-format makes the precision fp8, --fp8-recipe and --fp8-param-gather say how', () => {
    const r = importMegatronArgs(
      '--bf16 --fp8-format hybrid --fp8-recipe tensorwise --fp8-param-gather --fp8-amax-history-len 1024',
    );
    expect(fieldsOf(r)).toMatchObject({
      'training.precision': 'fp8',
      'training.fp8.recipe': 'tensorwise',
      'training.fp8.paramGather': true,
    });
    expect(r.warnings.filter((w) => /fp8/i.test(w))).toEqual([]);
    // Megatron's defaults: delayed scaling, no parameter gather.
    expect(fieldsOf(importMegatronArgs('--bf16 --fp8-format e4m3'))).toMatchObject({
      'training.precision': 'fp8',
      'training.fp8.recipe': 'delayed',
      'training.fp8.paramGather': false,
    });
  });

  it('says that --fp8-recipe without --fp8-format trains without FP8, and keeps bf16', () => {
    const r = importMegatronArgs('--bf16 --fp8-recipe delayed');
    expect(fieldsOf(r)['training.precision']).toBe('bf16');
    expect(r.warnings.join('\n')).toMatch(/--fp8-recipe delayed without --fp8-format: Megatron trains without FP8/);
  });

  it('reads --overlap-param-gather, which Megatron allows only with the distributed optimizer', () => {
    expect(
      fieldsOf(importMegatronArgs('--use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather'))[
        'parallel.overlapParamGather'
      ],
    ).toBe(true);
    expect(errorOf(() => importMegatronArgs('--use-distributed-optimizer --overlap-param-gather')).message).toMatch(
      /without --overlap-grad-reduce: Megatron requires both/,
    );
    expect(fieldsOf(importMegatronArgs('--use-distributed-optimizer'))['parallel.overlapParamGather']).toBe(false);
    expect(errorOf(() => importMegatronArgs('--overlap-param-gather')).message).toMatch(
      /--overlap-param-gather without --use-distributed-optimizer/,
    );
  });

  it('suggests the flag a misspelt one probably meant, still only warning', () => {
    const r = importMegatronArgs(
      '--tensor-model-paralel-size 4 --pipeline-model-parallel-size 2 --sequence-paralel --my-custom-flag',
    );
    expect(fieldsOf(r)).toMatchObject({ 'parallel.pp': 2 });
    expect(r.warnings).toContain(
      'unknown Megatron flags, ignored: --tensor-model-paralel-size (did you mean --tensor-model-parallel-size?) ' +
        '--sequence-paralel (did you mean --sequence-parallel?) --my-custom-flag',
    );
  });

  it('warns about shell variables it cannot expand and about what follows a pipe', () => {
    const r = importMegatronArgs('python pretrain_gpt.py ${GPT_ARGS[@]} --tensor-model-parallel-size 2 | tee log');
    expect(r.warnings.join('\n')).toMatch(
      /shell variables are not expanded, so the flags they hold were not read: \$\{GPT_ARGS\[@\]\}/,
    );
    expect(r.warnings.join('\n')).toMatch(/stopped reading at '\|'/);
  });

  it('rejects bad input with a message naming the flag', () => {
    expect(errorOf(() => importMegatronArgs('--num-layers --hidden-size 1024')).message).toBe(
      '--megatron-args: 1 problem:\n  --num-layers: needs a value (a positive whole number)',
    );
    expect(errorOf(() => importMegatronArgs('--hidden-size')).message).toMatch(/--hidden-size: needs a value/);
    expect(errorOf(() => importMegatronArgs('--micro-batch-size two')).message).toMatch(
      /--micro-batch-size: expected a positive whole number, got 'two'/,
    );
    expect(errorOf(() => importMegatronArgs('--micro-batch-size 0')).message).toMatch(
      /--micro-batch-size: expected a positive whole number, got '0'/,
    );
    expect(errorOf(() => importMegatronArgs('--tensor-model-parallel-size $TP')).message).toMatch(
      /shell variables are not expanded/,
    );
    expect(errorOf(() => importMegatronArgs('--fp16 --bf16')).message).toMatch(/--fp16 and --bf16 were both given/);
    expect(errorOf(() => importMegatronArgs('--sequence-parallel=true')).message).toMatch(
      /--sequence-parallel: takes no value \(a switch\), got 'true'/,
    );
    expect(errorOf(() => importMegatronArgs('--seq-length 4096 --max-position-embeddings 2048')).message).toMatch(
      /--max-position-embeddings 2048 is smaller than --seq-length 4096/,
    );
    expect(errorOf(() => importMegatronArgs('--data-path "unterminated')).message).toMatch(/unterminated " quote/);
  });

  it('lists every bad flag at once, each with what it expected', () => {
    const err = errorOf(() =>
      importMegatronArgs(
        '--tensor-model-parallel-size x --pipeline-model-parallel-size ' +
          '0 --recompute-granularity half --bf16=1 --num-layers',
      ),
    );
    expect(err).toBeInstanceOf(InvalidScenarioError);
    expect((err as InvalidScenarioError).problems).toEqual([
      { path: '--bf16', message: "takes no value (a switch), got '1'" },
      { path: '--num-layers', message: 'needs a value (a positive whole number)' },
      { path: '--tensor-model-parallel-size', message: "expected a positive whole number, got 'x'" },
      { path: '--pipeline-model-parallel-size', message: "expected a positive whole number, got '0'" },
      { path: '--recompute-granularity', message: "expected one of full, selective; got 'half'" },
    ]);
  });
});
