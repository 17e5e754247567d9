import { describe, expect, it } from 'vitest';
import { resolveScenario } from '../../src/scenario/resolve.js';
import { InvalidScenarioError } from '../../src/scenario/errors.js';
import { MEGATRON_DEEPSPEED } from '../../src/sim/workload/framework.js';
import { simulateStep } from '../../src/sim/simulateStep.js';
import { vtrainScenario, vtrainSetup } from '../../src/validation/vtrain.js';

/** A small GPT on one DGX A100 (80 GB) node, host-bound at micro-batch 1. */
function base(training: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    cluster: { preset: 'dgx-a100-80gb', nodes: 1, node: { gpusPerNode: 2 } },
    model: { arch: 'gpt', layers: 2, hidden: 1024, heads: 16, seqLen: 1024, vocab: 50304 },
    training: { globalBatch: 4, precision: 'fp16', flashAttention: false, ...training },
    parallel: { tp: 1, dp: 2, recompute: 'full' },
  };
}

describe('training.framework', () => {
  it('defaults to none: no framework model on the setup', () => {
    const s = resolveScenario(base(), 'test.yaml', '.');
    expect(s.training.framework).toBe('none');
    expect(s.framework).toBeUndefined();
  });

  it('selects the Megatron-DeepSpeed framework model', () => {
    const s = resolveScenario(base({ framework: 'megatron-deepspeed' }), 'test.yaml', '.');
    expect(s.framework).toBe(MEGATRON_DEEPSPEED);
  });

  it('rejects an unknown framework at training.framework, listing the allowed ones', () => {
    let problems: { path: string; message: string }[] = [];
    try {
      resolveScenario(base({ framework: 'megatron' }), 'test.yaml', '.');
    } catch (err) {
      if (!(err instanceof InvalidScenarioError)) throw err;
      problems = err.problems;
    }
    expect(problems).toHaveLength(1);
    expect(problems[0].path).toBe('training.framework');
    expect(problems[0].message).toContain("'none'");
    expect(problems[0].message).toContain("'megatron-deepspeed'");
  });

  it('changes the prediction: at micro-batch 1 the host issue model makes the step slower', () => {
    const none = simulateStep(resolveScenario(base(), 'test.yaml', '.')).result.stepTimeS;
    const mds = simulateStep(resolveScenario(base({ framework: 'megatron-deepspeed' }), 'test.yaml', '.')).result
      .stepTimeS;
    expect(mds).toBeGreaterThan(none);
  });

  it('is how the validation harness selects the framework of the measurement set', () => {
    const row = {
      group: 'single' as const,
      gpus: 2,
      globalBatch: 4,
      microBatch: 1,
      hidden: 1024,
      heads: 16,
      layers: 2,
      seqLen: 1024,
      tp: 1,
      dp: 2,
      pp: 1,
      measuredMs: 1,
    };
    expect((vtrainScenario(row).training as Record<string, unknown>).framework).toBe('megatron-deepspeed');
    expect(vtrainSetup(row, resolveScenario).framework).toBe(MEGATRON_DEEPSPEED);
  });

  it(
    "takes the sensitivity runs' host costs (validate --host-op-us, " +
      "--host-collective-us) into the rows' scenarios",
    () => {
      const row = {
        group: 'single' as const,
        gpus: 2,
        globalBatch: 4,
        microBatch: 1,
        hidden: 1024,
        heads: 16,
        layers: 2,
        seqLen: 1024,
        tp: 2,
        dp: 1,
        pp: 1,
        measuredMs: 1,
      };
      const fw = vtrainSetup(row, resolveScenario, { hostOpUs: 19.1, hostCollectiveUs: 13.4 }).framework;
      expect(fw?.hostOpNs).toBe(19_100);
      expect(fw?.hostCollectiveNs).toBe(13_400);
    },
  );
});

describe('training.hostOpUs (the host cost of a framework call, measured on the training host)', () => {
  it('replaces the cited 16.1 µs per call, and a host-bound step scales with it', () => {
    const at = (us: number | undefined) =>
      resolveScenario(
        base({ framework: 'megatron-deepspeed', ...(us === undefined ? {} : { hostOpUs: us }) }),
        'test.yaml',
        '.',
      );
    expect(at(20).framework?.hostOpNs).toBe(20_000);
    expect(at(undefined).framework?.hostOpNs).toBe(MEGATRON_DEEPSPEED.hostOpNs);
    expect(at(20).framework?.source).toContain('training.hostOpUs');
    // Host-bound (micro-batch 1, hidden 1024): a dearer call makes the step slower, a cheaper one faster.
    const t = (us: number) => simulateStep(at(us)).result.stepTimeS;
    expect(t(24)).toBeGreaterThan(t(16));
    expect(t(8)).toBeLessThan(t(16));
  });

  it(
    'training.hostCollectiveUs replaces the cited 89 µs per collective call; ' +
      'a tp-2 host-bound step scales with it',
    () => {
      const at = (us: number) =>
        resolveScenario(
          {
            ...base({ framework: 'megatron-deepspeed', hostCollectiveUs: us }),
            parallel: { tp: 2, dp: 1, recompute: 'full' },
          },
          'test.yaml',
          '.',
        );
      expect(at(40).framework?.hostCollectiveNs).toBe(40_000);
      expect(at(40).framework?.hostOpNs).toBe(MEGATRON_DEEPSPEED.hostOpNs);
      const t = (us: number) => simulateStep(at(us)).result.stepTimeS;
      expect(t(150)).toBeGreaterThan(t(89));
      expect(t(20)).toBeLessThan(t(89));
    },
  );

  it('needs a framework: with framework none it says what to do', () => {
    let problems: { path: string; message: string }[] = [];
    try {
      resolveScenario(base({ hostOpUs: 20 }), 'test.yaml', '.');
    } catch (err) {
      if (!(err instanceof InvalidScenarioError)) throw err;
      problems = err.problems;
    }
    expect(problems).toEqual([
      { path: 'training.hostOpUs', message: expect.stringContaining("training.framework is 'none'") },
    ]);
    try {
      resolveScenario(base({ hostCollectiveUs: 50 }), 'test.yaml', '.');
      throw new Error('expected a problem');
    } catch (err) {
      if (!(err instanceof InvalidScenarioError)) throw err;
      expect(err.problems.map((p) => p.path)).toEqual(['training.hostCollectiveUs']);
    }
  });
});

describe('training.vocabDivisibleBy: the framework pads the vocabulary', () => {
  const vocab = (training: Record<string, unknown>, tp = 1, v = 50257) => {
    const raw = base(training);
    (raw.model as Record<string, unknown>).vocab = v;
    (raw.parallel as Record<string, unknown>).tp = tp;
    (raw.parallel as Record<string, unknown>).dp = 2 / tp;
    return resolveScenario(raw, 'test.yaml', '.').model.vocab;
  };

  it('pads to a multiple of 128 × tp with Megatron-DeepSpeed, as Megatron does (_vocab_size_with_padding)', () => {
    expect(vocab({ framework: 'megatron-deepspeed' })).toBe(50304);
    expect(vocab({ framework: 'megatron-deepspeed' }, 2)).toBe(50432);
    expect(vocab({ framework: 'megatron-deepspeed' }, 1, 50304)).toBe(50304);
  });

  it('leaves it as given without a framework or with 1, and takes any other multiple', () => {
    expect(vocab({})).toBe(50257);
    expect(vocab({ framework: 'megatron-deepspeed', vocabDivisibleBy: 1 })).toBe(50257);
    expect(vocab({ vocabDivisibleBy: 64 })).toBe(50304);
    expect(vocab({ vocabDivisibleBy: 64 }, 2)).toBe(50304);
  });

  it('rejects a divisor that is not a whole number ≥ 1, at its path', () => {
    let path = '';
    try {
      vocab({ vocabDivisibleBy: 0 });
    } catch (err) {
      if (!(err instanceof InvalidScenarioError)) throw err;
      path = err.problems[0].path;
    }
    expect(path).toBe('training.vocabDivisibleBy');
  });

  it('so a Megatron-DeepSpeed GPT with GPT-2 vocabulary does not pay the misaligned LM head', () => {
    const raw = (training: Record<string, unknown>) => ({
      ...base(training),
      model: { arch: 'gpt', layers: 2, hidden: 1024, heads: 16, seqLen: 1024, vocab: 50257 },
    });
    const padded = simulateStep(
      resolveScenario(raw({ framework: 'megatron-deepspeed', microBatch: 2 }), 'test.yaml', '.'),
    ).result.stepTimeS;
    const unpadded = simulateStep(
      resolveScenario(raw({ framework: 'megatron-deepspeed', microBatch: 2, vocabDivisibleBy: 1 }), 'test.yaml', '.'),
    ).result.stepTimeS;
    expect(unpadded).toBeGreaterThan(padded);
  });
});
