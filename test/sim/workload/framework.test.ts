import { describe, expect, it } from 'vitest';
import { A100_SXM4_80GB } from '../../../src/sim/hardware/gpus.js';
import { passTemplate } from '../../../src/sim/parallel/blockTemplate.js';
import { simulateStep } from '../../../src/sim/simulateStep.js';
import { MEGATRON_DEEPSPEED, type FrameworkSpec } from '../../../src/sim/workload/framework.js';
import { opTimeNs } from '../../../src/sim/workload/kernelTime.js';
import { fusedSoftmaxAvailable } from '../../../src/sim/workload/megatronOps.js';
import { parameterTensors, type ModelSpec } from '../../../src/sim/workload/model.js';
import { elementwiseOp, type MicroBatchShape, type Op } from '../../../src/sim/workload/ops.js';
import { buildBlocks } from '../../../src/sim/workload/transformerOps.js';
import { scenarioOf } from '../../helpers/scenario.js';

const gpu = A100_SXM4_80GB;

/** A memory-bound op whose GPU time (no launch) is about `us` µs, issued at a host cost of `hostUs`. */
function op(name: string, us: number, hostUs: number): Op {
  const bytes = us * 1e3 * gpu.hbmBandwidthGBps * gpu.hbmEfficiency;
  return { ...elementwiseOp(name, 1, 0, bytes), hostNs: hostUs * 1e3 };
}

/** Op-by-op host/GPU pipeline from an idle start: kernel i starts at max(issued_i, end_{i−1}). */
function pipelineEnd(ops: Op[]): number {
  let host = 0;
  let end = 0;
  for (const o of ops) {
    host += o.hostNs ?? 0;
    end = Math.max(host, end) + opTimeNs(o, gpu, 'fp16', { launch: false });
  }
  return end;
}

const gpt: ModelSpec = {
  name: 'gpt-2-layer',
  arch: 'gpt',
  layers: 2,
  hidden: 1024,
  heads: 16,
  kvHeads: 16,
  ffnHidden: 4096,
  seqLen: 1024,
  vocab: 50304,
  tiedEmbeddings: true,
};
const shape: MicroBatchShape = {
  microBatch: 1,
  seqLen: 1024,
  dtype: 'fp16',
  tp: 1,
  sequenceParallel: false,
  flashAttention: false,
  recompute: 'full',
  framework: MEGATRON_DEEPSPEED,
};

describe('host issue model (framework overhead)', () => {
  it('gates a segment so that it ends exactly when the op-by-op host/GPU pipeline would', () => {
    const cases: Op[][] = [
      [op('a', 5, 20), op('b', 5, 20), op('c', 5, 20)], // host-bound: ends at 60 + 5
      [op('a', 100, 10), op('b', 100, 10)], // GPU-bound: ends at 10 + 200
      [op('a', 5, 10), op('b', 200, 10), op('c', 5, 50)], // mixed: the last issue decides
    ];
    for (const ops of cases) {
      const t = passTemplate(ops, [], 'forward', gpu, 'fp16');
      expect(t.hostModelled).toBe(true);
      expect(t.segments).toHaveLength(1);
      const s = t.segments[0];
      expect(s.hostNs).toBe(ops.reduce((a, o) => a + o.hostNs!, 0));
      expect(s.hostLeadNs + s.durationNs).toBeCloseTo(pipelineEnd(ops), 0);
      expect(s.hostLeadNs).toBeGreaterThanOrEqual(ops[0].hostNs!);
      expect(s.hostLeadNs).toBeLessThanOrEqual(s.hostNs);
    }
  });

  it('starts a new segment at an op that blocks the host', () => {
    const ops = [op('a', 5, 10), { ...op('b', 5, 10), hostSync: true }, op('c', 5, 10)];
    const t = passTemplate(ops, [], 'forward', gpu, 'fp16');
    expect(t.segments.map((s) => s.syncBefore)).toEqual([false, true]);
  });

  it('leaves ops without host costs as before: launch overhead on the GPU, no host tasks', () => {
    const plain = elementwiseOp('x', 1, 0, 1e6);
    const t = passTemplate([plain], [], 'forward', gpu, 'fp16');
    expect(t.hostModelled).toBe(false);
    expect(t.segments[0].durationNs).toBe(opTimeNs(plain, gpu, 'fp16'));
    expect(opTimeNs(plain, gpu, 'fp16') - opTimeNs(plain, gpu, 'fp16', { launch: false })).toBe(gpu.kernelLaunchNs);
  });

  it('is never faster with a costlier host, and is host-bound for a tiny model', () => {
    const run = (fw: FrameworkSpec | undefined) => {
      const s = scenarioOf({
        cluster: { preset: 'dgx-a100-80gb', nodes: 1, node: { gpusPerNode: 1, nicsPerNode: 1 } },
        model: { arch: 'gpt', layers: 4, hidden: 256, heads: 4, seqLen: 256, vocab: 1024 },
        training: { globalBatch: 2, microBatch: 1, precision: 'fp16', flashAttention: false },
        parallel: { recompute: 'full' },
      });
      return simulateStep({ ...s, framework: fw }).result.stepTimeS;
    };
    const none = run(undefined);
    const cheap = run({ ...MEGATRON_DEEPSPEED, hostOpNs: 1_000 });
    const real = run(MEGATRON_DEEPSPEED);
    const dear = run({ ...MEGATRON_DEEPSPEED, hostOpNs: 32_000 });
    expect(real).toBeGreaterThan(cheap);
    expect(dear).toBeGreaterThan(real);
    // Host-bound: doubling the per-call cost nearly doubles the step.
    expect(dear / real).toBeGreaterThan(1.8);
    expect(real).toBeGreaterThan(none);
  });
});

describe('Megatron-DeepSpeed GPT layer', () => {
  it('keeps every trainable tensor exactly once in some backward op', () => {
    for (const tp of [1, 2]) {
      const seen = buildBlocks(gpt, { ...shape, tp }).flatMap((b) => b.backward.flatMap((o) => o.gradParams ?? []));
      expect(seen.sort()).toEqual(
        parameterTensors(gpt)
          .map((t) => t.name)
          .sort(),
      );
    }
  });

  it('syncs the host before the MLP in the forward and in the recomputed forward, and nowhere else in a layer', () => {
    const layer = buildBlocks(gpt, shape).find((b) => b.name === 'layer.0')!;
    expect(layer.forward.filter((o) => o.hostSync).map((o) => o.name)).toEqual(['fc1']);
    expect(layer.backward.filter((o) => o.hostSync).map((o) => o.name)).toEqual(['recompute.fc1']);
  });

  /**
   * Counting framework: a plain call costs 1 ns and a c10d collective call 1,000 ns, so an op's host time
   * reads as collectives × 1000 + plain calls.
   */
  const counting: FrameworkSpec = { ...MEGATRON_DEEPSPEED, hostOpNs: 1, hostCollectiveNs: 1000 };
  const countShape = { ...shape, framework: counting };
  const plain = (ops: Op[]) => ops.reduce((a, o) => a + (o.hostNs! % 1000), 0);
  const colls = (ops: Op[]) => ops.reduce((a, o) => a + Math.floor(o.hostNs! / 1000), 0);

  it('charges every op a host cost, in whole framework calls', () => {
    for (const b of buildBlocks(gpt, { ...countShape, tp: 2 })) {
      for (const o of [...b.forward, ...b.backward]) {
        expect(o.hostNs, `${b.name} ${o.name}`).toBeGreaterThan(0);
        expect(Number.isInteger(o.hostNs!)).toBe(true);
      }
    }
  });

  it('counts the documented framework calls per layer: 48 forward, 50 recomputed, 58 backward at tp 1', () => {
    const layer = buildBlocks(gpt, countShape).find((b) => b.name === 'layer.0')!;
    const recomputed = layer.backward.filter((o) => o.name.startsWith('recompute.'));
    const backward = layer.backward.filter((o) => !o.name.startsWith('recompute.'));
    expect(plain(layer.forward)).toBe(48);
    expect(plain(recomputed)).toBe(50);
    expect(plain(backward)).toBe(58);
    expect(colls([...layer.forward, ...layer.backward])).toBe(0);
    // With TP each layer issues six c10d all-reduces (2 forward, 2 recomputed, 2 backward), charged as
    // collective calls; the plain calls stay the same.
    const tp2 = buildBlocks(gpt, { ...countShape, tp: 2 }).find((b) => b.name === 'layer.0')!;
    expect(colls(tp2.forward)).toBe(2);
    expect(colls(tp2.backward.filter((o) => o.name.startsWith('recompute.')))).toBe(2);
    expect(colls(tp2.backward.filter((o) => !o.name.startsWith('recompute.')))).toBe(2);
    expect(plain([...tp2.forward, ...tp2.backward])).toBe(48 + 50 + 58);
  });

  it(
    'charges a collective call at the cited c10d figure (89 µs, ' + 'pytorch/pytorch#138773), apart from plain calls',
    () => {
      expect(MEGATRON_DEEPSPEED.hostCollectiveNs).toBe(89_000);
      const at = (tp: number) => buildBlocks(gpt, { ...shape, tp }).find((b) => b.name === 'layer.0')!;
      const total = (b: ReturnType<typeof at>) => [...b.forward, ...b.backward].reduce((a, o) => a + o.hostNs!, 0);
      expect(total(at(2)) - total(at(1))).toBe(6 * 89_000);
    },
  );

  it(
    "charges DeepSpeed's pipeline-engine work per micro-batch: " + '14 calls on the first stage, 9 + 5 + 2 on the last',
    () => {
      const ops = buildBlocks(gpt, countShape).flatMap((b) => [...b.forward, ...b.backward]);
      const op = (name: string) => [ops.find((o) => o.name === name)!];
      // get_batch_pipe 10 (2 of them broadcast_data's broadcasts) + embedding modules 3 + F.embedding 1 (tp 1)
      // + engine: next(iter) 1, 3 inputs × clone/detach/to 3, 3 clones, forward 1.
      expect(plain(op('embed.lookup'))).toBe(10 - 2 + 3 + 1 + (1 + 9 + 3 + 1));
      expect(colls(op('embed.lookup'))).toBe(2);
      // cross-entropy 23 (3 of them its all-reduces) + Function 1 + engine: labels and loss mask × 3,
      // loss.detach() and total_loss += (3).
      expect(plain(op('loss'))).toBe(23 - 3 + 1 + (6 + 3));
      expect(colls(op('loss'))).toBe(3);
      // backward of the loss 6 + Function 1 + engine: loss.float() / GAS (2), loss.float() × scale (2), backward() (1).
      expect(plain(op('loss.bwd'))).toBe(6 + 1 + (2 + 2 + 1) + 2);
      // DeepSpeedEngine.backward's loss.mean().item() (2 calls) blocks the host before the backward is issued.
      expect(op('loss.bwd')[0].hostSync).toBe(true);
    },
  );

  it(
    'falls back to the torch softmax when b·heads per rank ' + 'is not a multiple of 4 (Megatron is_kernel_available)',
    () => {
      expect(fusedSoftmaxAvailable(MEGATRON_DEEPSPEED, 16, 1024)).toBe(true);
      expect(fusedSoftmaxAvailable(MEGATRON_DEEPSPEED, 2, 1024)).toBe(false);
      expect(fusedSoftmaxAvailable(MEGATRON_DEEPSPEED, 4, 8192)).toBe(false);
      const layer = (tp: number, b: number) =>
        buildBlocks(gpt, { ...shape, tp, microBatch: b }).find((x) => x.name === 'layer.0')!;
      const softmaxOps = (ops: Op[]) => ops.filter((o) => o.name.startsWith('attn.softmax'));
      // 16 heads / tp 8 = 2 per rank: one sample falls back (five fp32 passes, a kernel each), two do not.
      const fallback = layer(8, 1);
      const fused = layer(8, 2);
      const n = 2 * 1024 * 1024;
      expect(softmaxOps(fallback.forward).map((o) => o.name)).toEqual([
        'attn.softmax.to_fp32',
        'attn.softmax.scale',
        'attn.softmax.mask',
        'attn.softmax',
        'attn.softmax.to_half',
      ]);
      expect(softmaxOps(fallback.forward).reduce((a, o) => a + o.bytes, 0) / n).toBe(36);
      expect(softmaxOps(fallback.backward).reduce((a, o) => a + o.bytes, 0) / n).toBe(40);
      // The widening casts and the fills under the broadcast mask run on PyTorch's generic kernels.
      const generic = (ops: Op[]) =>
        softmaxOps(ops)
          .filter((o) => o.genericElements === n)
          .map((o) => o.name);
      expect(generic(fallback.forward)).toEqual(['attn.softmax.to_fp32', 'attn.softmax.mask']);
      expect(generic(fallback.backward)).toEqual(['attn.softmax.to_half.bwd', 'attn.softmax.mask.bwd']);
      // Six host calls forward (five ops and nn.Softmax's module), five backward: as the single op had.
      const hostNs = MEGATRON_DEEPSPEED.hostOpNs;
      expect(softmaxOps(fallback.forward).reduce((a, o) => a + (o.hostNs ?? 0), 0)).toBeCloseTo(6 * hostNs, 6);
      expect(softmaxOps(fallback.backward).reduce((a, o) => a + (o.hostNs ?? 0), 0)).toBeCloseTo(5 * hostNs, 6);
      // The causal fused kernel reads row r's first r + 1 scores and writes the whole row (2 bytes each).
      const lowerTriangle = (1024 + 1) / (2 * 1024);
      const fusedSoftmax = softmaxOps(fused.forward);
      expect(fusedSoftmax).toHaveLength(1);
      expect(fusedSoftmax[0].bytes / (2 * n)).toBeCloseTo(2 * (lowerTriangle + 1), 12);
    },
  );

  it(
    "charges the causal fused softmax's backward the gradient " +
      'and output on the lower triangle and whole-row writes',
    () => {
      const layer = buildBlocks(gpt, { ...shape, tp: 2, microBatch: 2 }).find((x) => x.name === 'layer.0')!;
      const bwd = layer.backward.find((o) => o.name === 'attn.softmax.bwd')!;
      const n = 2 * (gpt.heads / 2) * 1024 * 1024;
      expect(bwd.bytes / n).toBeCloseTo(2 * (2 * ((1024 + 1) / (2 * 1024)) + 1), 12);
    },
  );
});

describe('DeepSpeed pipeline engine around a pipelined Megatron-DeepSpeed step', () => {
  /** A small host-bound GPT on 2 pipeline stages (× tp) in one node, run through Megatron-DeepSpeed. */
  function pipelined(pp: number, tp = 1, framework: Partial<FrameworkSpec> = {}) {
    const gpus = 2 * tp;
    const s = scenarioOf({
      cluster: { preset: 'dgx-a100-80gb', nodes: 1, node: { gpusPerNode: gpus, nicsPerNode: 1 } },
      model: { arch: 'gpt', layers: 4, hidden: 1024, heads: 16, seqLen: 1024, vocab: 50304 },
      training: {
        globalBatch: 4,
        microBatch: 1,
        precision: 'fp16',
        flashAttention: false,
        framework: 'megatron-deepspeed',
      },
      parallel: {
        tp,
        pp,
        dp: gpus / (tp * pp),
        schedule: '1f1b',
        recompute: 'full',
        ddp: { bucketMB: 1e6, overlap: false },
      },
    });
    return { ...s, framework: { ...s.framework!, ...framework } };
  }

  /** For each transfer of `what`, how long after it ended the receiving rank's host started the pass (ns). */
  function hostAfterArrival(
    setup: ReturnType<typeof pipelined>,
    what: 'activations' | 'gradients',
    rank: number,
    firstBlock: string,
  ): number[] {
    const { trace } = simulateStep(setup);
    const tasks = trace.program.tasks;
    return tasks
      .filter((t) => t.kind === 'pp-send' && t.label.startsWith(what) && t.collective!.group[1] === rank)
      .map((a) => {
        const pass = `host: ${what === 'activations' ? 'fwd' : 'bwd'} ${firstBlock} mb${a.microBatch}`;
        const host = tasks.find((t) => t.stream === 'host' && t.ranks[0] === rank && t.label === pass)!;
        return trace.startNs[host.id] - trace.endNs[a.id];
      });
  }

  it('the last stage loads its own batch behind the activations: it issues no forward before they arrive', () => {
    const waits = hostAfterArrival(pipelined(2), 'activations', 1, 'layer.2');
    expect(waits.length).toBe(4);
    for (const w of waits) expect(w).toBeGreaterThanOrEqual(0);
    // Without the last stage's load nothing holds its host back: it issues ahead of the data.
    expect(
      Math.min(...hostAfterArrival(pipelined(2, 1, { lastStageLoadsBatch: false }), 'activations', 1, 'layer.2')),
    ).toBeLessThan(0);
  });

  it(
    'with TP, partitioned pipeline tensors make the first ' + 'stage wait for the received gradients before a backward',
    () => {
      // Ranks: tp fastest, then pp; stage 0 (ranks 0–1) holds the embedding and layers 0–1, so
      // its backward opens at layer.1.
      const waits = hostAfterArrival(pipelined(2, 2), 'gradients', 0, 'layer.1');
      expect(waits.length).toBe(4);
      for (const w of waits) expect(w).toBeGreaterThanOrEqual(0);
      expect(
        Math.min(...hostAfterArrival(pipelined(2, 2, { partitionedPipeSync: false }), 'gradients', 0, 'layer.1')),
      ).toBeLessThan(0);
    },
  );

  it('each costs time, and none of them applies without a pipeline', () => {
    const t = (pp: number, tp: number, f: Partial<FrameworkSpec> = {}) =>
      simulateStep(pipelined(pp, tp, f)).result.stepTimeS;
    expect(t(2, 1, { lastStageLoadsBatch: false })).toBeLessThan(t(2, 1));
    expect(t(2, 2, { partitionedPipeSync: false })).toBeLessThan(t(2, 2));
    expect(t(2, 1, { lossItemSync: false })).toBeLessThan(t(2, 1));
    expect(t(1, 1, { lastStageLoadsBatch: false, partitionedPipeSync: false })).toBe(t(1, 1));
  });
});
