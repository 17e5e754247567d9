import { describe, expect, it } from 'vitest';
import { simulateStep } from '../../../src/sim/simulateStep.js';
import { scenarioOf } from '../../helpers/scenario.js';
import { memoryPerGpu } from '../../../src/sim/memory/memory.js';
import { parameterTensors } from '../../../src/sim/workload/model.js';

const MiB = 2 ** 20;

function llama(parallel: Record<string, unknown>, microBatches = 1) {
  return scenarioOf({
    cluster: { preset: 'dgx-a100-80gb', nodes: 1 },
    model: { preset: 'llama2-7b', seqLen: 1024 },
    training: { globalBatch: 8 * microBatches, microBatch: 1 },
    parallel,
  });
}

describe('ZeRO', () => {
  it('shards model state as the ZeRO paper says: 16P, 4P + 12P/N, 2P + 14P/N, 16P/N bytes', () => {
    const P = simulateStep(llama({ zero: 0 })).plan.stages[0].gradients.paramsPerRank;
    const N = 8;
    const state = (zero: number) => {
      const m = simulateStep(llama({ zero })).result.memory.perStage[0];
      return m.weightsBytes + m.gradientsBytes + m.optimizerBytes;
    };
    expect(state(0)).toBeCloseTo(16 * P, -3);
    expect(state(1)).toBeCloseTo(4 * P + (12 * P) / N, -3);
    expect(state(2)).toBeCloseTo(2 * P + (14 * P) / N, -3);
    expect(state(3)).toBeCloseTo((16 * P) / N, -3);
  });

  it('uses less memory at each stage, and less again with CPU offload', () => {
    const peak = (p: Record<string, unknown>) => simulateStep(llama(p)).result.memory.peakBytesPerGpu;
    const [z0, z1, z2, z3, off] = [
      peak({ zero: 0 }),
      peak({ zero: 1 }),
      peak({ zero: 2 }),
      peak({ zero: 3 }),
      peak({ zero: 3, offload: 'cpu' }),
    ];
    expect(z1).toBeLessThan(z0);
    expect(z2).toBeLessThan(z1);
    expect(z3).toBeLessThan(z2);
    expect(off).toBeLessThan(z3);
  });

  it('ZeRO-1 and 2 reduce-scatter gradients and all-gather the updated weights once', () => {
    for (const zero of [1, 2]) {
      const { plan } = simulateStep(llama({ zero }));
      const tasks = plan.program.tasks;
      const buckets = plan.stages[0].gradients.buckets;
      expect(tasks.filter((t) => t.kind === 'dp-reducescatter').length).toBe(buckets.length);
      expect(tasks.filter((t) => t.kind === 'dp-allreduce').length).toBe(0);
      const gathers = tasks.filter((t) => t.kind === 'dp-allgather');
      expect(gathers.length).toBe(1);
      expect(gathers[0].collective!.bytes).toBe(plan.stages[0].gradients.paramsPerRank * 2);
    }
  });

  it('ZeRO-2 reduce-scatters in every micro-batch, with reduce_bucket_size buckets', () => {
    const { plan } = simulateStep(llama({ zero: 2, zeroConfig: { reduceBucketMB: 200 } }, 3));
    const buckets = plan.stages[0].gradients.buckets;
    // DeepSpeed sends a bucket off before a gradient would take it past reduce_bucket_size: each bucket stays within
    // 200 MiB unless one tensor alone is larger, and could not have taken the next bucket's first gradient.
    const bytes = new Map(parameterTensors(llama({}).model).map((t) => [t.name, t.elements * 2]));
    for (const b of buckets) if (b.tensors.length > 1) expect(b.bytes).toBeLessThanOrEqual(200 * MiB);
    for (let i = 0; i + 1 < buckets.length; i++)
      expect(buckets[i].bytes + bytes.get(buckets[i + 1].tensors[0])!).toBeGreaterThan(200 * MiB);
    expect(buckets.reduce((a, b) => a + b.bytes, 0)).toBe([...bytes.values()].reduce((a, b) => a + b, 0));
    expect(plan.program.tasks.filter((t) => t.kind === 'dp-reducescatter').length).toBe(3 * buckets.length);
  });

  it("ZeRO-3 gathers each block's weights before its forward and backward, and reduce-scatters after backward", () => {
    const { plan } = simulateStep(llama({ zero: 3 }));
    const blocks = plan.stages[0].chunks[0].length; // embedding, 32 layers, head
    const tasks = plan.program.tasks;
    expect(tasks.filter((t) => t.kind === 'zero-gather').length).toBe(2 * blocks);
    expect(tasks.filter((t) => t.kind === 'dp-reducescatter').length).toBe(blocks);
    // Per micro-batch each weight is gathered twice (forward, backward) in 16 bits and its gradient reduced once.
    const P = plan.stages[0].gradients.paramsPerRank;
    const sum = (kind: string) => tasks.filter((t) => t.kind === kind).reduce((a, t) => a + t.collective!.bytes, 0);
    expect(sum('zero-gather')).toBe(2 * 2 * P);
    expect(sum('dp-reducescatter')).toBe(2 * P);
  });

  it(
    'ZeRO-3 in fp32 gathers and reduces 4-byte elements; ' + 'fp32 gradients with 16-bit weights only the reduction',
    () => {
      const bytesOf = (training: Record<string, unknown>, parallel: Record<string, unknown>) => {
        const s = scenarioOf({
          cluster: { preset: 'dgx-a100-80gb', nodes: 1 },
          model: { preset: 'llama2-7b', seqLen: 1024 },
          training: { globalBatch: 8, microBatch: 1, ...training },
          parallel: { zero: 3, ...parallel },
        });
        const { plan } = simulateStep(s);
        const P = plan.stages[0].gradients.paramsPerRank;
        const sum = (kind: string) =>
          plan.program.tasks.filter((t) => t.kind === kind).reduce((a, t) => a + t.collective!.bytes, 0);
        return { gather: sum('zero-gather') / (2 * P), reduce: sum('dp-reducescatter') / P };
      };
      expect(bytesOf({ precision: 'fp32' }, {})).toEqual({ gather: 4, reduce: 4 });
      expect(bytesOf({}, { fp32Gradients: true })).toEqual({ gather: 2, reduce: 4 });
      // DeepSpeed's communication_data_type fp32: 16-bit gradients, reduced in fp32.
      expect(bytesOf({}, { fp32Reduction: true })).toEqual({ gather: 2, reduce: 4 });
    },
  );

  it(
    'ZeRO-2 with 16-bit gradients reduced in fp32 sends 4 bytes per element, ' +
      'and its buckets still hold 2-byte gradients',
    () => {
      const run = (fp32Reduction: boolean) => {
        const s = scenarioOf({
          cluster: { preset: 'dgx-a100-80gb', nodes: 1 },
          model: { preset: 'llama2-7b', seqLen: 1024 },
          training: { globalBatch: 8, microBatch: 1 },
          parallel: { zero: 2, fp32Reduction },
        });
        const { plan } = simulateStep(s);
        const reductions = plan.program.tasks.filter((t) => t.kind === 'dp-reducescatter');
        return {
          wire: reductions.reduce((a, t) => a + t.collective!.bytes, 0),
          buckets: plan.stages[0].gradients.buckets.length,
          P: plan.stages[0].gradients.paramsPerRank,
        };
      };
      const [bf16, fp32] = [run(false), run(true)];
      // One micro-batch per replica (8 / (1 × 8)): every parameter's gradient reduced once, at 2 and at 4 bytes.
      expect(bf16.wire).toBe(2 * bf16.P);
      expect(fp32.wire).toBe(4 * fp32.P);
      expect(fp32.buckets).toBe(bf16.buckets);
    },
  );

  it(
    'ZeRO-3 with overlap_comm off gathers and reduces on the compute stream, ' +
      'as DeepSpeed does: none of it is hidden',
    () => {
      // parameter_offload.py: __allgather_stream is the default stream unless overlap_comm; stage3.py: so is
      // reduce_and_partition_stream. Then the step is compute + communication.
      const run = (overlapComm: boolean) => simulateStep(llama({ zero: 3, zeroConfig: { overlapComm } }, 2)).result;
      const off = run(false);
      expect(off.breakdown.exposedCommS).toBeCloseTo(off.breakdown.commS, 6);
      expect(off.stepTimeS).toBeCloseTo(off.breakdown.computeS + off.breakdown.commS, 6);
      const on = run(true);
      expect(on.breakdown.exposedCommS).toBeLessThan(0.9 * on.breakdown.commS);
      expect(on.stepTimeS).toBeLessThan(off.stepTimeS);
    },
  );

  it('ZeRO-3 costs more communication than ZeRO-2, which hides most of it on NVSwitch', () => {
    const z2 = simulateStep(llama({ zero: 2 })).result;
    const z3 = simulateStep(llama({ zero: 3 })).result;
    expect(z3.breakdown.commS).toBeGreaterThan(z2.breakdown.commS * 1.3);
    expect(z3.stepTimeS).toBeGreaterThanOrEqual(z2.stepTimeS);
  });

  it('CPU offload runs the optimizer on the host: copies over PCIe and host Adam time appear', () => {
    const { plan, result } = simulateStep(llama({ zero: 2, offload: 'cpu' }));
    const tasks = plan.program.tasks;
    expect(tasks.some((t) => t.kind === 'd2h')).toBe(true);
    expect(tasks.some((t) => t.kind === 'h2d')).toBe(true);
    expect(tasks.some((t) => t.kind === 'optimizer')).toBe(false);
    expect(result.memory.perStage[0].optimizerBytes).toBe(0);
  });

  it(
    'CPU offload copies the gradient shard to the host in fp32 ' +
      'and the weights back in their own type, as DeepSpeed does',
    () => {
      // DeepSpeed casts the shard's gradients to fp32 on the GPU and copies them to the host's fp32 buffer
      // (stage_1_and_2.py async_inplace_copy_grad_to_fp32_buffer_from_gpu, stage3.py
      // _offload_grad_partition_at_boundary); after CPU-Adam it copies the 16-bit (fp32 training: fp32) weights back.
      for (const [training, zero, weightBytes] of [
        [{}, 2, 2],
        [{}, 3, 2],
        [{ precision: 'fp32' }, 2, 4],
      ] as const) {
        const s = scenarioOf({
          cluster: { preset: 'dgx-a100-80gb', nodes: 1 },
          model: { preset: 'llama2-7b', seqLen: 1024 },
          training: { globalBatch: 8, microBatch: 1, ...training },
          parallel: { zero, offload: 'cpu' },
        });
        const { plan } = simulateStep(s);
        const shard = plan.stages[0].gradients.paramsPerRank / 8;
        const node = s.cluster.node;
        const ns = (bytes: number) => bytes / node.pcieBandwidthGBps + node.pcieLatencyNs;
        const of = (kind: string) => plan.program.tasks.filter((t) => t.kind === kind);
        expect(of('d2h').length).toBeGreaterThan(0);
        for (const t of of('d2h')) expect(t.durationNs).toBeCloseTo(ns(4 * shard), -1);
        for (const t of of('h2d')) expect(t.durationNs).toBeCloseTo(ns(weightBytes * shard), -1);
      }
    },
  );

  it(
    "shares the node's CPU-Adam throughput among its 8 ranks: " +
      "each rank's update takes shard × 8 / the node's rate",
    () => {
      const { plan } = simulateStep(llama({ zero: 2, offload: 'cpu' }));
      const P = plan.stages[0].gradients.paramsPerRank;
      const host = plan.program.tasks.filter((t) => t.label === 'host Adam (CPU offload)');
      expect(host.length).toBeGreaterThan(0);
      // dgx-a100-80gb: 2 × 8 channels of DDR4-3200 = 409.6 GB/s, 75% of it, 28 bytes per parameter.
      const nodeParamsPerS = (409.6e9 * 0.75) / 28;
      for (const t of host) expect(t.durationNs).toBeCloseTo((((P / 8) * 8) / nodeParamsPerS) * 1e9, -3);
    },
  );

  it('matches the memory account for the shard a rank holds', () => {
    const run = simulateStep(llama({ zero: 1 }));
    const m = run.result.memory.perStage[0];
    // Megatron's distributed optimizer (zero 1 without a framework) reduces in place in its
    // gradient buffer: no bucket buffers.
    const expected = memoryPerGpu({
      model: llama({}).model,
      paramsPerRank: run.plan.stages[0].gradients.paramsPerRank,
      dp: 8,
      zero: 1,
      precision: 'mixed',
      optimizer: 'adam',
      activationBytes: m.activationsBytes,
      bucketBytes: 25 * MiB,
      bucketsInFlight: 0,
      tp: 1,
    });
    expect(m.totalBytes).toBeCloseTo(expected.totalBytes, -3);
  });

  it('refuses ZeRO-2/3 with pipeline parallelism, as DeepSpeed does', () => {
    expect(() =>
      scenarioOf({
        cluster: { preset: 'dgx-a100-80gb', nodes: 1 },
        model: { preset: 'llama2-7b' },
        training: { globalBatch: 8, microBatch: 1 },
        parallel: { pp: 2, zero: 2 },
      }),
    ).toThrow(/parallel.zero/);
  });
});
