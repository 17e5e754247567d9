import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { importDeepSpeedConfig } from '../../src/scenario/importDeepSpeed.js';
import { scenarioWithImports } from '../../src/scenario/importSettings.js';
import type { ImportResult } from '../../src/scenario/importResult.js';
import { ScenarioError } from '../../src/sim/errors.js';
import { InvalidScenarioError } from '../../src/scenario/errors.js';
import { MiB } from '../../src/sim/engine/units.js';

function fieldsOf(r: ImportResult): Record<string, unknown> {
  return Object.fromEntries(r.fields.map((f) => [f.path, f.value]));
}

function ds(config: unknown, context = {}): ImportResult {
  return importDeepSpeedConfig(JSON.stringify(config), 'ds_config.json', context);
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

const ZERO3_OFFLOAD = {
  train_batch_size: 64,
  train_micro_batch_size_per_gpu: 2,
  gradient_accumulation_steps: 4,
  bf16: { enabled: true },
  optimizer: { type: 'AdamW', params: { lr: 3e-4 } },
  zero_optimization: {
    stage: 3,
    overlap_comm: true,
    contiguous_gradients: true,
    reduce_bucket_size: 5e7,
    stage3_prefetch_bucket_size: 5e7,
    offload_optimizer: { device: 'cpu', pin_memory: true },
  },
  gradient_clipping: 1.0,
};

describe('importDeepSpeedConfig', () => {
  it(
    'reads ZeRO-3 with CPU offload: zero 3, offload cpu, ' +
      'overlap, the reduce bucket in MiB, bf16, Adam and the batch',
    () => {
      const r = ds(ZERO3_OFFLOAD, { dp: 8 });
      expect(fieldsOf(r)).toEqual({
        'training.precision': 'bf16',
        'parallel.zero': 3,
        // DeepSpeed's ZeRO-3 gathers module by module, not FSDP's block by block.
        'parallel.zeroConfig.stage3': 'deepspeed',
        'parallel.offload': 'cpu',
        // reduce_bucket_size counts elements: 5e7 bf16 gradients.
        'parallel.zeroConfig.reduceBucketMB': (5e7 * 2) / MiB,
        'parallel.zeroConfig.overlapComm': true,
        // stage3_prefetch_bucket_size: what DeepSpeed gathers at a time.
        'parallel.zeroConfig.prefetchBucketElements': 5e7,
        'training.microBatch': 2,
        'training.globalBatch': 64,
        'training.optimizer': 'adam',
      });
      expect(r.warnings).toEqual([]);
    },
  );

  it(
    "uses DeepSpeed's defaults where the config is silent: stage 0 reduces after backward; " +
      'overlap_comm is off below stage 3 and on at stage 3',
    () => {
      expect(fieldsOf(ds({ train_batch_size: 16 }, { dp: 16 }))).toMatchObject({
        'parallel.zero': 0,
        'parallel.offload': 'none',
        'parallel.ddp.overlap': false,
        'training.microBatch': 1,
      });
      expect(fieldsOf(ds({ zero_optimization: { stage: 2 } }))).toMatchObject({
        'parallel.zero': 2,
        'parallel.zeroConfig.overlapComm': false,
        'parallel.zeroConfig.reduceBucketMB': (5e8 * 2) / MiB,
      });
      expect(fieldsOf(ds({ zero_optimization: { stage: 3 } }))['parallel.zeroConfig.overlapComm']).toBe(true);
      const r = ds({ zero_optimization: { stage: 2 } });
      expect(r.fields.find((f) => f.path === 'parallel.zeroConfig.overlapComm')?.byDefault).toBe(true);
    },
  );

  it(
    "makes stage 1 DeepSpeed's ZeRO-1, reducing in buckets of " +
      "reduce_bucket_size (converted at 4 bytes per element in fp32), not in DDP's",
    () => {
      const f = fieldsOf(ds({ zero_optimization: { stage: 1, reduce_bucket_size: 2.5e7 } }, { precision: 'fp32' }));
      expect(f['parallel.zeroConfig.stage1']).toBe('deepspeed');
      expect(f['parallel.zeroConfig.reduceBucketMB']).toBeCloseTo((2.5e7 * 4) / MiB, 3);
      expect(f).not.toHaveProperty('parallel.ddp.bucketMB');
      expect(f).not.toHaveProperty('parallel.ddp.firstBucketMB');
      // Other stages leave the choice alone: it only says whose stage 1 it is.
      expect(fieldsOf(ds({ zero_optimization: { stage: 2 } }))).not.toHaveProperty('parallel.zeroConfig.stage1');
      expect(fieldsOf(ds({ zero_optimization: { stage: 2 } }))).not.toHaveProperty('parallel.zeroConfig.stage3');
    },
  );

  it('derives the missing batch size from the other two and the data-parallel size, as DeepSpeed does', () => {
    expect(
      fieldsOf(ds({ train_batch_size: 256, gradient_accumulation_steps: 4 }, { dp: 16 }))['training.microBatch'],
    ).toBe(4);
    expect(
      fieldsOf(ds({ train_micro_batch_size_per_gpu: 2, gradient_accumulation_steps: 4 }, { dp: 16 }))[
        'training.globalBatch'
      ],
    ).toBe(128);
    expect(fieldsOf(ds({ train_micro_batch_size_per_gpu: 2 }, { dp: 16 }))['training.globalBatch']).toBe(32);
  });

  it("rejects batch sizes that disagree with the scenario's data-parallel size, naming the fields", () => {
    const err = errorOf(() =>
      ds(
        { train_batch_size: 96, train_micro_batch_size_per_gpu: 2, gradient_accumulation_steps: 4 },
        { dp: 8, dpFrom: '8 GPUs / (tp 1 × pp 1)' },
      ),
    );
    expect(err.message).toBe(
      "--deepspeed-config 'ds_config.json': 1 problem:\n" +
        '  train_batch_size: 96 ≠ train_micro_batch_size_per_gpu 2 × gradient_accumulation_steps 4 × dp 8 ' +
        '(8 GPUs / (tp 1 × pp 1)) = 64; make the three agree for this cluster (DeepSpeed checks the same)',
    );
    expect(errorOf(() => ds({ train_batch_size: 100, train_micro_batch_size_per_gpu: 4 }, { dp: 8 })).message).toMatch(
      /train_batch_size: 100 is not a multiple of train_micro_batch_size_per_gpu 4 × dp 8 = 32/,
    );
    expect(errorOf(() => ds({ gradient_accumulation_steps: 4 }, { dp: 8 })).message).toMatch(
      /gradient_accumulation_steps: given without train_batch_size or train_micro_batch_size_per_gpu/,
    );
  });

  it('leaves fields set to "auto" (Hugging Face Trainer) as the scenario has them, and says which', () => {
    const r = ds(
      {
        train_batch_size: 'auto',
        train_micro_batch_size_per_gpu: 'auto',
        gradient_accumulation_steps: 'auto',
        fp16: { enabled: 'auto' },
        bf16: { enabled: 'auto' },
        zero_optimization: {
          stage: 2,
          overlap_comm: 'auto',
          reduce_bucket_size: 'auto',
          allgather_bucket_size: 'auto',
        },
      },
      { dp: 8 },
    );
    expect(fieldsOf(r)).toEqual({ 'parallel.zero': 2, 'parallel.offload': 'none' });
    expect(r.warnings.join('\n')).toMatch(
      new RegExp(
        /"auto" .* leaves the scenario's value, or its default: fp16.enabled, /.source +
          /bf16.enabled, .*zero_optimization.overlap_comm.*train_batch_size/.source,
      ),
    );
    // Without the model's hidden size the Trainer's rule for the bucket cannot be followed, and a warning says so.
    expect(r.warnings).toContain(
      'zero_optimization.reduce_bucket_size "auto": the Hugging Face Trainer fills in hidden_size², ' +
        "and the scenario's model has no hidden size here; " +
        "parallel.zeroConfig.reduceBucketMB keeps the scenario's value (or its default)",
    );
  });

  it(
    'follows the Hugging Face Trainer for every "auto" size ' + 'it derives from hidden_size (trainer_config_finalize)',
    () => {
      const all = {
        reduce_bucket_size: 'auto',
        stage3_prefetch_bucket_size: 'auto',
        stage3_param_persistence_threshold: 'auto',
      };
      const r = ds(
        { bf16: { enabled: true }, optimizer: { type: 'auto' }, zero_optimization: { stage: 3, ...all } },
        { dp: 8, hidden: 4096 },
      );
      // hidden_size² = 16,777,216 elements × 2 bytes = 32 MiB.
      expect(fieldsOf(r)['parallel.zeroConfig.reduceBucketMB']).toBe(32);
      // int(0.9 × 16,777,216) = int(15,099,494.4) = 15,099,494; 10 × 4096 = 40,960: DeepSpeed's ZeRO-3 sizes.
      expect(fieldsOf(r)['parallel.zeroConfig.prefetchBucketElements']).toBe(15099494);
      expect(fieldsOf(r)['parallel.zeroConfig.persistenceThresholdElements']).toBe(40960);
      expect(r.warnings.join('\n')).not.toMatch(/stage3_/);
      // The general "leaves the scenario's value" list names only what nothing filled in.
      expect(r.warnings.filter((w) => w.includes('leaves the scenario'))).toEqual([
        expect.stringMatching(/: optimizer\.type$/),
      ]);
      // A hidden size that makes 0.9·h² whole: 0.9 × 1000² = 900,000.
      expect(
        fieldsOf(ds({ zero_optimization: { stage: 3, ...all } }, { hidden: 1000 }))[
          'parallel.zeroConfig.prefetchBucketElements'
        ],
      ).toBe(900000);

      // Without the hidden size nothing is derived, and each field says why.
      const unknown = ds({ bf16: { enabled: true }, zero_optimization: { stage: 3, ...all } }, { dp: 8 });
      expect(fieldsOf(unknown)).not.toHaveProperty('parallel.zeroConfig.reduceBucketMB');
      expect(unknown.warnings.filter((w) => w.includes('has no hidden size here')).map((w) => w.split(' ')[0])).toEqual(
        [
          'zero_optimization.reduce_bucket_size',
          'zero_optimization.stage3_prefetch_bucket_size',
          'zero_optimization.stage3_param_persistence_threshold',
        ],
      );

      // Below stage 3 the Trainer leaves the stage3_* fields "auto" and DeepSpeed does not read them: nothing to say.
      const two = ds({ bf16: { enabled: true }, zero_optimization: { stage: 2, ...all } }, { dp: 8, hidden: 4096 });
      expect(fieldsOf(two)['parallel.zeroConfig.reduceBucketMB']).toBe(32);
      expect(two.warnings.join('\n')).not.toMatch(/stage3_/);
      // At stage 0 the reduce bucket does not apply at all, "auto" or not.
      const zero = ds({ zero_optimization: { stage: 0, reduce_bucket_size: 'auto' } }, { hidden: 4096 });
      expect(zero.warnings).toEqual([
        expect.stringMatching(/neither fp16 nor bf16/),
        expect.stringMatching(/reduce_bucket_size.*ignored with stage 0/),
      ]);
      // Numbers there are DeepSpeed's counts (ge=0 in DeepSpeedZeroConfig): 0 is allowed, a negative one is not.
      expect(() => ds({ zero_optimization: { stage: 3, stage3_param_persistence_threshold: 0 } })).not.toThrow();
      expect(errorOf(() => ds({ zero_optimization: { stage: 3, stage3_prefetch_bucket_size: -5 } })).message).toMatch(
        /zero_optimization\.stage3_prefetch_bucket_size: expected a whole number ≥ 0 or "auto", got -5/,
      );
    },
  );

  it(
    'derives a batch field left "auto" from the other two, ' + 'as the rule makes the Trainer fill it, and checks it',
    () => {
      const micro = ds(
        { train_batch_size: 64, train_micro_batch_size_per_gpu: 'auto', gradient_accumulation_steps: 2 },
        { dp: 8 },
      );
      expect(fieldsOf(micro)).toMatchObject({ 'training.globalBatch': 64, 'training.microBatch': 4 });
      expect(micro.fields.find((f) => f.path === 'training.microBatch')?.from).toBe(
        'train_batch_size 64 / (gradient_accumulation_steps 2 × dp 8) (for its "auto")',
      );
      expect(micro.warnings.join('\n')).not.toMatch(/"auto"/);
      expect(
        fieldsOf(
          ds(
            { train_batch_size: 'auto', train_micro_batch_size_per_gpu: 2, gradient_accumulation_steps: 4 },
            { dp: 8 },
          ),
        )['training.globalBatch'],
      ).toBe(64);
      expect(
        errorOf(() =>
          ds(
            { train_batch_size: 60, train_micro_batch_size_per_gpu: 'auto', gradient_accumulation_steps: 2 },
            { dp: 8 },
          ),
        ).message,
      ).toMatch(/train_batch_size: 60 is not a multiple of gradient_accumulation_steps 2 × dp 8/);
      // One number and an "auto": the Trainer's own arguments decide, and accumulation does not default to 1.
      const one = ds(
        { train_batch_size: 64, train_micro_batch_size_per_gpu: 'auto', gradient_accumulation_steps: 'auto' },
        { dp: 8 },
      );
      expect(fieldsOf(one)['training.microBatch']).toBeUndefined();
      expect(one.warnings.join('\n')).toMatch(/"auto" .*: train_micro_batch_size_per_gpu, gradient_accumulation_steps/);
    },
  );

  it(
    'with ZeRO-1 an "auto" reduce_bucket_size filled in as ' +
      "hidden² sizes the buckets DeepSpeed's stage 1 reduces in",
    () => {
      const r = ds(
        { bf16: { enabled: true }, zero_optimization: { stage: 1, reduce_bucket_size: 'auto' } },
        { dp: 8, hidden: 4096 },
      );
      expect(fieldsOf(r)).toMatchObject({
        'parallel.zeroConfig.stage1': 'deepspeed',
        'parallel.zeroConfig.reduceBucketMB': 32,
      });
    },
  );

  it(
    "undoes fp32 gradients an earlier Megatron import set (DeepSpeed's engine " +
      "keeps gradients in the parameters' type), communication_data_type fp32 or not",
    () => {
      expect(
        fieldsOf(ds({ bf16: { enabled: true }, zero_optimization: { stage: 2 } }, { dp: 8, fp32Gradients: true }))[
          'parallel.fp32Gradients'
        ],
      ).toBe(false);
      // Nothing to undo: not mentioned.
      expect(fieldsOf(ds({ bf16: { enabled: true }, zero_optimization: { stage: 2 } }, { dp: 8 }))).not.toHaveProperty(
        'parallel.fp32Gradients',
      );
      // fp32 communication: the gradients stay 16-bit (the bucket of 5e7 elements holds 2 bytes each) and are reduced
      // in fp32 (stage_1_and_2.py gradient_reduction_w_predivide converts each bucket for its collective and back).
      const fp32 = fieldsOf(
        ds(
          {
            bf16: { enabled: true },
            communication_data_type: 'fp32',
            zero_optimization: { stage: 2, reduce_bucket_size: 5e7 },
          },
          { dp: 8, fp32Gradients: true },
        ),
      );
      expect(fp32['parallel.fp32Gradients']).toBe(false);
      expect(fp32['parallel.fp32Reduction']).toBe(true);
      expect(fp32['parallel.zeroConfig.reduceBucketMB']).toBe((5e7 * 2) / MiB);
      expect(fieldsOf(ds({ bf16: { enabled: true }, communication_data_type: 'bf16' }, { dp: 8 }))).not.toHaveProperty(
        'parallel.fp32Reduction',
      );
    },
  );

  it(
    'fills in an "auto" reduce_bucket_size as the Hugging Face Trainer does, ' +
      'hidden_size² elements, when the model is known',
    () => {
      const r = ds(
        { bf16: { enabled: true }, zero_optimization: { stage: 3, reduce_bucket_size: 'auto' } },
        { dp: 8, hidden: 4096 },
      );
      // 4096² elements × 2 bytes = 32 MiB.
      expect(fieldsOf(r)['parallel.zeroConfig.reduceBucketMB']).toBe(32);
      expect(r.warnings.join('\n')).not.toMatch(/reduce_bucket_size/);
    },
  );

  it('reads fp16, and rejects fp16 and bf16 both enabled', () => {
    expect(fieldsOf(ds({ fp16: { enabled: true, loss_scale: 0 } }))['training.precision']).toBe('fp16');
    expect(errorOf(() => ds({ fp16: { enabled: true }, bf16: { enabled: true } })).message).toMatch(
      /fp16.enabled: true, and so is bf16.enabled; DeepSpeed accepts one of them/,
    );
  });

  it('rejects malformed JSON with its line and column, and wrong values naming the field', () => {
    const bad = errorOf(() => importDeepSpeedConfig('{\n  "train_batch_size": 64,\n}', 'ds.json'));
    expect(bad.message).toMatch(/^--deepspeed-config 'ds.json': not valid JSON at line 3, column 1/);
    expect(errorOf(() => importDeepSpeedConfig('[1, 2]', 'ds.json')).message).toMatch(/expected a JSON object/);
    expect(errorOf(() => ds({ zero_optimization: { stage: 4 } })).message).toMatch(
      /zero_optimization.stage: expected 0, 1, 2 or 3, got 4/,
    );
    expect(errorOf(() => ds({ zero_optimization: { stage: 'auto' } })).message).toMatch(
      /zero_optimization.stage: expected 0, 1, 2 or 3, got "auto"/,
    );
    expect(errorOf(() => ds({ train_batch_size: '64' })).message).toMatch(
      /train_batch_size: expected a positive whole number or "auto", got "64"/,
    );
    expect(errorOf(() => ds({ zero_optimization: { stage: 2, reduce_bucket_size: 'big' } })).message).toMatch(
      /zero_optimization.reduce_bucket_size: expected a positive whole number or "auto", got "big"/,
    );
    expect(errorOf(() => ds({ zero_optimization: { stage: 3, overlap_comm: 'yes' } })).message).toMatch(
      /zero_optimization.overlap_comm: expected true, false or "auto", got "yes"/,
    );
    expect(
      errorOf(() => ds({ zero_optimization: { stage: 3, offload_optimizer: { device: 'nvme' } } })).message,
    ).toMatch(/offload_optimizer.device: expected "cpu" or "none", got "nvme": offload to NVMe is not modelled/);
    expect(errorOf(() => ds({ zero_optimization: 2 })).message).toMatch(
      /zero_optimization: expected a mapping \(\{ ... \}\), got 2/,
    );
    // DeepSpeed lower-cases communication_data_type and knows three (runtime/config.py get_communication_data_type).
    expect(errorOf(() => ds({ communication_data_type: 'int8' })).message).toMatch(
      /communication_data_type: expected "fp16", "bf16" or "fp32", got "int8"/,
    );
    expect(fieldsOf(ds({ bf16: { enabled: true }, communication_data_type: 'FP32' }))['parallel.fp32Reduction']).toBe(
      true,
    );
  });

  it('reports every bad field at once, each with where it is, what it holds and what is allowed', () => {
    const err = errorOf(() =>
      ds(
        {
          train_batch_size: 'lots',
          bf16: { enabled: 'yes' },
          zero_optimization: { stage: 5, reduce_bucket_size: -1 },
          optimizer: { type: 7 },
        },
        { dp: 8 },
      ),
    );
    expect(err).toBeInstanceOf(InvalidScenarioError);
    const problems = (err as InvalidScenarioError).problems;
    expect(problems.map((p) => p.path).sort()).toEqual([
      'bf16.enabled',
      'optimizer.type',
      'train_batch_size',
      'zero_optimization.reduce_bucket_size',
      'zero_optimization.stage',
    ]);
    expect(err.message.split('\n')[0]).toBe("--deepspeed-config 'ds_config.json': 5 problems:");
    for (const line of err.message.split('\n').slice(1)) expect(line).toMatch(/^ {2}[a-z_.0-9]+: expected .+, got .+$/);
    // A malformed batch field is reported as such, not also as a broken batch rule.
    const batch = errorOf(() =>
      ds({ train_batch_size: 64, train_micro_batch_size_per_gpu: 'two', gradient_accumulation_steps: 4 }, { dp: 8 }),
    ) as InvalidScenarioError;
    expect(batch.problems.map((p) => p.path)).toEqual(['train_micro_batch_size_per_gpu']);
  });

  it('warns about unknown fields and settings it does not model, without failing', () => {
    const r = ds({
      zero_optimization: { stage: 3, offload_param: { device: 'cpu' }, zero_quantized_weights: true },
      activation_checkpointing: { partition_activations: true },
      something_new: {},
    });
    const w = r.warnings.join('\n');
    expect(w).toMatch(/offload_param: parameter offload is not modelled/);
    expect(w).toMatch(/zero_quantized_weights: not modelled/);
    expect(w).toMatch(/activation_checkpointing: not modelled/);
    // DeepSpeed ignores unknown top-level fields; one far from every known name is passed over with a warning.
    expect(w).toMatch(/unknown DeepSpeed fields, ignored: something_new/);
  });
});
describe('scenarioWithImports with a DeepSpeed config', () => {
  const dir = mkdtempSync(join(tmpdir(), 'clustersim-ds-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const scenario = join(dir, 'scenario.yaml');
  writeFileSync(
    scenario,
    'cluster: { preset: dgx-a100-80gb, nodes: 2 }\n' +
      'model: { preset: bert-large }\n' +
      'training: { globalBatch: 256, microBatch: 8 }\n' +
      'parallel: { ddp: { bucketMB: 25 } }\n',
  );
  const config = (c: unknown) => {
    const p = join(dir, `ds-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(p, JSON.stringify(c));
    return p;
  };

  it('checks the batch against the cluster: 2 nodes of 8 GPUs give dp 16', () => {
    const ok = scenarioWithImports(scenario, {
      deepspeedConfig: config({
        train_batch_size: 512,
        train_micro_batch_size_per_gpu: 4,
        gradient_accumulation_steps: 8,
        zero_optimization: { stage: 2 },
      }),
    });
    expect(ok.scenario.training).toMatchObject({ globalBatch: 512, microBatch: 4 });
    expect(ok.scenario.parallel).toMatchObject({ zero: 2, dp: 16 });
    expect(() =>
      scenarioWithImports(scenario, {
        deepspeedConfig: config({
          train_batch_size: 512,
          train_micro_batch_size_per_gpu: 4,
          gradient_accumulation_steps: 4,
        }),
      }),
    ).toThrow(/× dp 16 \(16 GPUs \/ \(tp 1 × pp 1\)\) = 256/);
  });

  it('applies --set after the config, so --set wins', () => {
    const r = scenarioWithImports(scenario, { deepspeedConfig: config({ zero_optimization: { stage: 2 } }) }, [
      'parallel.zero=1',
    ]);
    expect(r.scenario.parallel.zero).toBe(1);
  });

  it('reports a missing config file as bad input', () => {
    expect(() => scenarioWithImports(scenario, { deepspeedConfig: join(dir, 'nope.json') })).toThrow(
      /cannot read DeepSpeed config .*no such file/,
    );
  });

  it('takes the hidden size for "auto" buckets from the model\'s Hugging Face config too', () => {
    const hf = join(dir, 'hf.yaml');
    writeFileSync(
      hf,
      `cluster: { preset: dgx-a100-80gb, nodes: 1 }\n` +
        `model: { hfConfig: ${JSON.stringify(resolve('scenarios/models/llama2-7b.config.json'))} }\n` +
        `training: { globalBatch: 64, microBatch: 1, seqLen: 4096 }\n`,
    );
    const { hidden_size: hidden } = JSON.parse(readFileSync('scenarios/models/llama2-7b.config.json', 'utf8')) as {
      hidden_size: number;
    };
    const r = scenarioWithImports(hf, {
      deepspeedConfig: config({ bf16: { enabled: true }, zero_optimization: { stage: 2, reduce_bucket_size: 'auto' } }),
    });
    expect(r.scenario.parallel.zeroConfig.reduceBucketMB).toBe((hidden * hidden * 2) / MiB);
  });

  it('keeps an explicit Megatron setting when the DeepSpeed config only has a default for it', () => {
    const r = scenarioWithImports(scenario, {
      megatronArgs: '--use-distributed-optimizer --overlap-grad-reduce --bf16',
      deepspeedConfig: config({ train_micro_batch_size_per_gpu: 8 }),
    });
    expect(r.scenario.parallel.zero).toBe(1);
    expect(r.scenario.parallel.zeroConfig.stage1).toBe('megatron');
    expect(r.scenario.training.globalBatch).toBe(128);
  });

  it("Megatron-DeepSpeed with a stage-1 config runs DeepSpeed's ZeRO-1 in reduce_bucket_size buckets", () => {
    const r = scenarioWithImports(scenario, {
      megatronArgs: '--bf16',
      deepspeedConfig: config({ zero_optimization: { stage: 1, reduce_bucket_size: 5e7 } }),
    });
    expect(r.scenario.parallel).toMatchObject({
      zero: 1,
      zeroConfig: { stage1: 'deepspeed', reduceBucketMB: (5e7 * 2) / MiB },
    });
  });
});
