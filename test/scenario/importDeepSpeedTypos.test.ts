import { describe, expect, it } from 'vitest';
import { importDeepSpeedConfig } from '../../src/scenario/importDeepSpeed.js';
import { InvalidScenarioError } from '../../src/scenario/errors.js';
import { ScenarioError } from '../../src/sim/errors.js';
import { duplicateJsonKeys } from '../../src/scenario/jsonDuplicateKeys.js';

/** The problems an import of `text` is refused with, one `path: message` line each ('' when it is accepted). */
function refusal(text: string): string {
  try {
    importDeepSpeedConfig(text, 'ds_config.json', { dp: 8 });
  } catch (err) {
    if (err instanceof InvalidScenarioError) return err.problems.map((p) => `${p.path}: ${p.message}`).join('\n');
    if (err instanceof ScenarioError) return err.message;
    throw err;
  }
  return '';
}

describe('a DeepSpeed config with misspelt or repeated fields', () => {
  it(
    'refuses a field the ZeRO config or its offload blocks do not have, ' + 'as DeepSpeed does, naming the one meant',
    () => {
      const text = JSON.stringify({
        train_batch_size: 64,
        zero_optimization: {
          stgae: 3,
          offload_optimiser: { device: 'cpu' },
          offload_param: { devcie: 'cpu' },
          offload_optimizer: { device: 'cpu', pin_memroy: true },
        },
      });
      const lines = refusal(text).split('\n');
      expect(lines).toContain(
        'zero_optimization.stgae: unknown field; ' +
          "did you mean 'stage'? (DeepSpeed refuses fields its zero_optimization config does not have)",
      );
      expect(lines).toContain(
        'zero_optimization.offload_optimiser: unknown field; ' +
          "did you mean 'offload_optimizer'? (DeepSpeed refuses fields its zero_optimization config does not have)",
      );
      expect(lines).toContain(
        'zero_optimization.offload_param.devcie: unknown field; ' +
          "did you mean 'device'? (DeepSpeed refuses fields its zero_optimization.offload_param config does not have)",
      );
      expect(lines).toContain(
        'zero_optimization.offload_optimizer.pin_memroy: unknown field; ' +
          "did you mean 'pin_memory'? (DeepSpeed refuses fields its " +
          'zero_optimization.offload_optimizer config does not have)',
      );
      expect(lines).toHaveLength(4);
    },
  );

  it(
    'refuses a top-level field within a typo of one it reads, ' +
      'which DeepSpeed would ignore, leaving that one at its default',
    () => {
      expect(
        refusal(JSON.stringify({ train_batch_sise: 64, zero_optimisation: { stage: 2 } }))
          .split('\n')
          .sort(),
      ).toEqual([
        "train_batch_sise: unknown field; did you mean 'train_batch_size'? (DeepSpeed ignores " +
          "unknown top-level fields, which would leave 'train_batch_size' at its default)",
        "zero_optimisation: unknown field; did you mean 'zero_optimization'? (DeepSpeed " +
          "ignores unknown top-level fields, which would leave 'zero_optimization' at its default)",
      ]);
      // Real DeepSpeed fields near others are not typos.
      expect(
        refusal(
          JSON.stringify({
            train_batch_size: 64,
            bf16: { enabled: true },
            bfloat16: { enabled: true },
            fp16: { enabled: false },
            gradient_accumulation_dtype: 'fp32',
            zero_optimization: {
              stage: 3,
              stage3_prefetch_bucket_size: 1,
              prefetch_bucket_size: 1,
              offload_optimizer: { device: 'cpu', ratio: 0.5 },
            },
          }),
        ),
      ).toBe('');
    },
  );

  it('refuses a key given twice in one object, as DeepSpeed does, instead of taking the last', () => {
    expect(
      refusal('{"train_batch_size": 64, "zero_optimization": {"stage": 2}, "zero_optimization": {"stage": 3}}'),
    ).toMatch(
      /^--deepspeed-config 'ds_config.json': 'zero_optimization' given twice; DeepSpeed stops at duplicate keys/,
    );
    expect(
      duplicateJsonKeys('{"a": {"b": 1, "c": [{"b": 2, "b": 3}], "b": 4}, "s": "\\\\\\"a\\": 1", "a": 0}'),
    ).toEqual(['a.c.[].b', 'a.b', 'a']);
    expect(duplicateJsonKeys('{"a": {"b": 1}, "c": {"b": 2}, "d": [1, {"e": "b"}, "b"]}')).toEqual([]);
    expect(duplicateJsonKeys('{"x": 1, "x": 2, "x": 3}')).toEqual(['x']);
  });
});
