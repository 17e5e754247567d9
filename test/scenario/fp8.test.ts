import { describe, expect, it } from 'vitest';
import { InvalidScenarioError } from '../../src/scenario/errors.js';
import { stageMemories } from '../../src/sim/memory/stageMemory.js';
import { compileStep } from '../../src/sim/parallel/stepCompiler.js';
import { simulateStep } from '../../src/sim/simulateStep.js';
import { scenarioOf } from '../helpers/scenario.js';

function llama(training: Record<string, unknown> = {}, parallel: Record<string, unknown> = {}, preset = 'dgx-h100') {
  return scenarioOf({
    cluster: { preset, nodes: 1 },
    model: { preset: 'llama3-8b', layers: 4, seqLen: 4096 },
    training: { globalBatch: 16, microBatch: 1, ...training },
    parallel: { tp: 2, zero: 1, sequenceParallel: true, ...parallel },
  });
}

function problemsOf(make: () => unknown): { path: string; message: string }[] {
  try {
    make();
  } catch (err) {
    if (err instanceof InvalidScenarioError) return err.problems;
    throw err;
  }
  return [];
}

/** Linear weight elements one TP rank of llama3-8b holds per layer (QKV with 8 KV heads, proj, gate, up, down). */
function linearWeightsPerLayer(tp: number): number {
  const h = 4096;
  const kv = 8 * 128;
  const ffn = 14336;
  return (h * h + 2 * h * kv + h * h + 3 * h * ffn) / tp;
}

describe('training.precision fp8', () => {
  it(
    'makes a step faster than bf16, but by less than the ' + '2× of the FP8 peak (attention, casts and the rest stay)',
    () => {
      const bf16 = simulateStep(llama()).result.stepTimeS;
      const fp8 = simulateStep(llama({ precision: 'fp8' })).result.stepTimeS;
      expect(fp8).toBeLessThan(bf16);
      expect(fp8).toBeGreaterThan(bf16 / 2);
    },
  );

  it('costs more under current scaling than under delayed scaling (the amax pass)', () => {
    const delayed = simulateStep(llama({ precision: 'fp8' })).result.stepTimeS;
    const tensorwise = simulateStep(llama({ precision: 'fp8', fp8: { recipe: 'tensorwise' } })).result.stepTimeS;
    expect(tensorwise).toBeGreaterThan(delayed);
  });

  it('quotes MFU against the fp8 dense peak, and says what fp8 is taken to be', () => {
    const r = simulateStep(llama({ precision: 'fp8' })).result;
    expect(r.mfu).toBeCloseTo(r.tflopsPerGpu / 1978.9, 6);
    expect(r.notes.join('\n')).toMatch(/linear GEMMs run in FP8/);
    expect(r.notes.join('\n')).toMatch(/activation memory is counted in bf16/);
  });

  it(
    'holds 2 more bytes per linear weight (the FP8 copy and its transpose), ' +
      'none more with the FP8 parameter gather',
    () => {
      const [bf16] = stageMemories(llama());
      const [fp8] = stageMemories(llama({ precision: 'fp8' }));
      const [gathered] = stageMemories(llama({ precision: 'fp8', fp8: { paramGather: true } }));
      expect(fp8.weightsBytes - bf16.weightsBytes).toBe(2 * 4 * linearWeightsPerLayer(2));
      expect(gathered.weightsBytes).toBe(bf16.weightsBytes);
    },
  );

  it('all-gathers the updated FP8 weights in one byte each with the FP8 parameter gather', () => {
    const gatherBytes = (training: Record<string, unknown>) => {
      const plan = compileStep(llama(training, { dp: 4 }));
      const task = plan.program.tasks.find((x) => x.label === 'all-gather updated weights');
      return task?.collective?.bytes;
    };
    const bf16 = gatherBytes({});
    const fp8 = gatherBytes({ precision: 'fp8', fp8: { paramGather: true } });
    expect(bf16! - fp8!).toBe(4 * linearWeightsPerLayer(2));
  });
});

describe('training.fp8.recipe mxfp8 on B200', () => {
  it('reduces no amaxes, says what it runs, and keeps both FP8 copies of each weight with their scales', () => {
    const delayed = llama({ precision: 'fp8' }, {}, 'hgx-b200');
    const mx = llama({ precision: 'fp8', fp8: { recipe: 'mxfp8' } }, {}, 'hgx-b200');
    const amaxTasks = (s: typeof mx) => compileStep(s).program.tasks.filter((t) => /amax/.test(t.label)).length;
    expect(amaxTasks(delayed)).toBeGreaterThan(0);
    expect(amaxTasks(mx)).toBe(0);
    expect(simulateStep(mx).result.notes.join(' ')).toMatch(/MXFP8 block scaling.*no transposes, no amax reductions/);
    // Weight copies beside bf16: 2 bytes (FP8 and its transpose) under delayed scaling, 2 + 2/32 under MXFP8.
    const weights = (s: typeof mx) => stageMemories(s)[0].weightsBytes;
    const elements = 4 * linearWeightsPerLayer(2);
    expect(weights(mx) - weights(delayed)).toBeCloseTo((elements * 2) / 32, -2);
  });
});

describe('fp8 refused where it is not modelled, with the reason', () => {
  it('on a GPU without an FP8 peak (A100)', () => {
    const problems = problemsOf(() => llama({ precision: 'fp8' }, {}, 'dgx-a100-80gb'));
    expect(problems.map((p) => p.path)).toContain('training.precision');
    expect(problems.find((p) => p.path === 'training.precision')!.message).toMatch(/no dense fp8 peak/);
  });

  it(
    'with the mxfp8 recipe off Blackwell, ' + 'or with the FP8 parameter gather, and the blockwise one (not modelled)',
    () => {
      expect(problemsOf(() => llama({ precision: 'fp8', fp8: { recipe: 'mxfp8' } }, {}, 'hgx-b200'))).toEqual([]);
      expect(
        problemsOf(() => llama({ precision: 'fp8', fp8: { recipe: 'mxfp8', paramGather: true } }, {}, 'hgx-b200'))[0]
          .path,
      ).toBe('training.fp8.paramGather');
      expect(problemsOf(() => llama({ precision: 'fp8', fp8: { recipe: 'mxfp8' } }))[0].message).toMatch(/Blackwell/);
      expect(problemsOf(() => llama({ precision: 'fp8', fp8: { recipe: 'blockwise' } }))[0].message).toMatch(
        /not modelled/,
      );
    },
  );

  it(
    'with fp8 settings but another precision, with ZeRO-3, ' +
      'and with the parameter gather outside the distributed optimizer',
    () => {
      expect(problemsOf(() => llama({ fp8: { recipe: 'delayed' } }))[0].path).toBe('training.fp8');
      expect(problemsOf(() => llama({ precision: 'fp8' }, { zero: 3, tp: 1, sequenceParallel: false }))[0].path).toBe(
        'parallel.zero',
      );
      expect(problemsOf(() => llama({ precision: 'fp8', fp8: { paramGather: true } }, { zero: 2 }))[0].path).toBe(
        'training.fp8.paramGather',
      );
    },
  );

  it('with the Megatron-DeepSpeed framework model, which has no FP8 path', () => {
    const problems = problemsOf(() => llama({ precision: 'fp8', framework: 'megatron-deepspeed' }));
    expect(problems.some((p) => p.path === 'training.precision' && /Megatron-DeepSpeed/.test(p.message))).toBe(true);
  });
});
