import { describe, expect, it } from 'vitest';
import { simulateStep } from '../../../src/sim/simulateStep.js';
import { compileStep } from '../../../src/sim/parallel/stepCompiler.js';
import { stageMemories } from '../../../src/sim/memory/stageMemory.js';
import { BUCKETS_IN_FLIGHT } from '../../../src/sim/memory/memory.js';
import { parameterTensors } from '../../../src/sim/workload/model.js';
import { scenarioOf } from '../../helpers/scenario.js';

const MiB = 2 ** 20;

/**
 * Whose ZeRO-1 `zero: 1` is. DeepSpeed's stage 1 reduces gradients through the same ipg buckets of
 * reduce_bucket_size as its stage 2 (deepspeed/runtime/zero/stage_1_and_2.py); Megatron's distributed optimizer
 * reduce-scatters the buckets of its DDP gradient buffer (megatron/core/distributed/param_and_grad_buffer.py).
 */
function llama(parallel: Record<string, unknown>, training: Record<string, unknown> = {}, layers = 4) {
  return scenarioOf({
    cluster: { preset: 'dgx-a100-80gb', nodes: 1 },
    model: { preset: 'llama2-7b', seqLen: 1024, layers },
    training: { globalBatch: 16, microBatch: 1, ...training },
    parallel: { zero: 1, ...parallel },
  });
}

const bucketsOf = (s: ReturnType<typeof llama>) => compileStep(s).stages[0].gradients.buckets;

describe('ZeRO-1, DeepSpeed or Megatron', () => {
  it("DeepSpeed's stage 1 packs reduce_bucket_size buckets, so their number follows reduceBucketMB", () => {
    const tensors = parameterTensors(llama({}).model);
    const bytes = new Map(tensors.map((t) => [t.name, t.elements * 2]));
    const total = tensors.reduce((a, t) => a + t.elements * 2, 0);
    const counts = [50, 200].map((limitMB) => {
      const buckets = bucketsOf(llama({ zeroConfig: { stage1: 'deepspeed', reduceBucketMB: limitMB } }));
      // Every gradient once; a bucket stays within the limit unless one tensor alone is larger, and is sent off only
      // when the next gradient would take it past the limit (stage_1_and_2.py
      // reduce_independent_p_g_buckets_and_remove_grads).
      expect(buckets.reduce((a, b) => a + b.bytes, 0)).toBe(total);
      buckets.forEach((b, i) => {
        if (b.tensors.length > 1) expect(b.bytes).toBeLessThanOrEqual(limitMB * MiB);
        const next = buckets[i + 1];
        if (next) expect(b.bytes + bytes.get(next.tensors[0])!).toBeGreaterThan(limitMB * MiB);
      });
      // The reduction issues one reduce-scatter per bucket, in the last micro-batch only.
      const tasks = simulateStep(
        llama({ zeroConfig: { stage1: 'deepspeed', reduceBucketMB: limitMB } }),
      ).plan.program.tasks.filter((t) => t.kind === 'dp-reducescatter');
      expect(tasks.map((t) => t.collective!.bytes)).toEqual(buckets.map((b) => b.bytes));
      return buckets.length;
    });
    // Each bucket holds at least one tensor, and no bucket of 200 MiB holds more than 200 MiB of several: a total of
    // well over 200 MiB needs more 50 MiB buckets than 200 MiB ones.
    expect(total).toBeGreaterThan(400 * MiB);
    expect(counts[0]).toBeGreaterThan(counts[1]);
  });

  it(
    "Megatron's distributed optimizer reduces in its DDP buckets: " +
      'reduceBucketMB changes nothing, ddp.bucketMB does',
    () => {
      const megatron = (p: Record<string, unknown>) =>
        bucketsOf(llama({ zeroConfig: { stage1: 'megatron', ...p }, ddp: { bucketMB: 40, firstBucketMB: 40 } }));
      expect(megatron({ reduceBucketMB: 50 })).toEqual(megatron({ reduceBucketMB: 200 }));
      // The same buckets as plain data parallelism's (zero 0) with those DDP settings.
      expect(megatron({})).toEqual(bucketsOf(llama({ zero: 0, ddp: { bucketMB: 40, firstBucketMB: 40 } })));
      expect(
        bucketsOf(llama({ zeroConfig: { stage1: 'megatron' }, ddp: { bucketMB: 10, firstBucketMB: 10 } })).length,
      ).toBeGreaterThan(megatron({}).length);
    },
  );

  it('says whose ZeRO-1 ran in simulate --json, so two runs that differ only there can be told apart', () => {
    expect(simulateStep(llama({ zeroConfig: { stage1: 'deepspeed' } })).result.parallel.zeroStage1).toBe('deepspeed');
    expect(simulateStep(llama({})).result.parallel.zeroStage1).toBe('megatron');
    expect(simulateStep(llama({ zero: 0 })).result.parallel.zeroStage1).toBeUndefined();
  });

  it(
    'takes the ZeRO-1 of the framework when the scenario does not say: ' +
      'DeepSpeed under megatron-deepspeed, else Megatron',
    () => {
      expect(llama({}).parallel.zeroConfig.stage1).toBe('megatron');
      expect(llama({}, { framework: 'megatron-deepspeed' }).parallel.zeroConfig.stage1).toBe('deepspeed');
      expect(
        llama({ zeroConfig: { stage1: 'megatron' } }, { framework: 'megatron-deepspeed' }).parallel.zeroConfig.stage1,
      ).toBe('megatron');
      expect(bucketsOf(llama({ zeroConfig: { reduceBucketMB: 50 } }, { framework: 'megatron-deepspeed' }))).toEqual(
        bucketsOf(llama({ zeroConfig: { stage1: 'deepspeed', reduceBucketMB: 50 } })),
      );
    },
  );

  it(
    'holds the buckets it reduces in: DeepSpeed its ipg buffers of reduceBucketMB, ' +
      'Megatron none beyond its gradient buffer',
    () => {
      const buffers = (p: Record<string, unknown>) => stageMemories(llama(p))[0].buffersBytes;
      // Gradients of several hundred MiB fill both buckets in flight; the rest of the buffers does not change.
      expect(
        buffers({ zeroConfig: { stage1: 'deepspeed', reduceBucketMB: 100 } }) -
          buffers({ zeroConfig: { stage1: 'deepspeed', reduceBucketMB: 50 } }),
      ).toBe(BUCKETS_IN_FLIGHT * 50 * MiB);
      expect(buffers({ zeroConfig: { stage1: 'megatron', reduceBucketMB: 100 } })).toBe(
        buffers({ zeroConfig: { stage1: 'megatron', reduceBucketMB: 50 } }),
      );
      // Megatron's buckets are views into its gradient buffer, reduced in place: their size holds no memory of its own.
      expect(buffers({ zeroConfig: { stage1: 'megatron' }, ddp: { bucketMB: 100 } })).toBe(
        buffers({ zeroConfig: { stage1: 'megatron' }, ddp: { bucketMB: 50 } }),
      );
    },
  );

  it(
    "DeepSpeed's stage 1 reduces after backward under a pipeline, " +
      'overlap_comm or not (its engine turns overlap off), and says so',
    () => {
      const piped = (overlapComm: boolean, stage1: string) =>
        llama({ pp: 2, zeroConfig: { stage1, overlapComm } }, { globalBatch: 16 });
      const step = (s: ReturnType<typeof llama>) => simulateStep(s).result.stepTimeS;
      expect(piped(true, 'deepspeed').warnings?.join('\n')).toMatch(
        /DeepSpeed turns overlap_comm off under pipeline parallelism/,
      );
      expect(step(piped(true, 'deepspeed'))).toBe(step(piped(false, 'deepspeed')));
      expect(piped(true, 'megatron').warnings ?? []).toEqual([]);
      // Only when the scenario asked for overlap: the schema's default is not a request
      // (a diff review found it blamed).
      expect(
        llama({ pp: 2 }, { globalBatch: 16, framework: 'megatron-deepspeed' }).warnings?.join('\n') ?? '',
      ).not.toMatch(/overlap_comm/);
      // Megatron's --overlap-grad-reduce does overlap under a pipeline.
      expect(step(piped(true, 'megatron'))).toBeLessThan(step(piped(false, 'megatron')));
    },
  );
});
