import { describe, expect, it } from 'vitest';
import { stageMemories } from '../../../src/sim/memory/stageMemory.js';
import { peakInFlight, peakLayersInFlight, type PipeOp } from '../../../src/sim/parallel/schedules.js';
import { scenarioOf } from '../../helpers/scenario.js';
import { largestLayerParameters } from '../../../src/sim/workload/model.js';
import { modelPreset } from '../../../src/sim/workload/modelPresets.js';
import { MiB } from '../../../src/sim/engine/units.js';

const gpt = { arch: 'gpt', layers: 8, hidden: 4096, heads: 32, ffnHidden: 16384, seqLen: 2048, vocab: 51200 };
const stages = (tiedEmbeddings: boolean, pp: number) =>
  stageMemories(
    scenarioOf({
      name: 't',
      cluster: { preset: 'dgx-a100-80gb', nodes: 1 },
      model: { ...gpt, tiedEmbeddings },
      training: { globalBatch: 16, microBatch: 1 },
      parallel: { tp: 2, pp },
    }),
  );

describe('parameters per pipeline stage', () => {
  it(
    'with tied embeddings and a pipeline, the last stage holds ' +
      'its own copy of the word embeddings (Megatron), V·h / tp more',
    () => {
      const tied = stages(true, 2);
      const untied = stages(false, 2);
      // Untied: the last stage holds the LM head (V·h / tp) as a weight of its own; tied: the
      // copy of the embedding, as many.
      expect(tied[1].paramsPerRank).toBe(untied[1].paramsPerRank);
      expect(tied[0].paramsPerRank).toBe(untied[0].paramsPerRank);
      // Without a pipeline one tensor serves both ends: tied holds V·h / tp fewer than untied.
      const [one] = stages(true, 1);
      const [oneUntied] = stages(false, 1);
      expect(oneUntied.paramsPerRank - one.paramsPerRank).toBe((51200 * 4096) / 2);
    },
  );
});

describe('parameters each GPU keeps between steps', () => {
  it(
    "are the rank's share after TP, and under ZeRO-3 also over the " +
      'data-parallel ranks (what `memory` prints and its --json says)',
    () => {
      const held = (zero: number) => {
        const [s] = stageMemories(
          scenarioOf({
            name: 'z',
            cluster: { preset: 'dgx-a100-80gb', nodes: 1 },
            model: { ...gpt, tiedEmbeddings: true },
            training: { globalBatch: 16, microBatch: 1 },
            parallel: { tp: 2, dp: 4, zero },
          }),
        );
        return s;
      };
      for (const zero of [0, 1, 2]) expect(held(zero).paramsHeldPerGpu).toBe(held(zero).paramsPerRank);
      expect(held(3).paramsHeldPerGpu).toBe(held(3).paramsPerRank / 4);
      // ZeRO-3's weights are the held share at 2 bytes each.
      expect(held(3).weightsBytes).toBeCloseTo(2 * held(3).paramsHeldPerGpu, 0);
    },
  );
});

describe('fp32 gradients with 16-bit training (Megatron main_grad)', () => {
  it(
    'hold 6 + 12/d bytes per parameter with the distributed optimizer, ' +
      'as Megatron documents it (docs/source/api-guide/dist_optimizer.md)',
    () => {
      const states = (fp32Gradients: boolean) => {
        const [s] = stageMemories(
          scenarioOf({
            name: 'g',
            cluster: { preset: 'dgx-a100-80gb', nodes: 1 },
            model: { ...gpt, tiedEmbeddings: false },
            training: { globalBatch: 16, microBatch: 1, precision: 'bf16' },
            parallel: { zero: 1, fp32Gradients },
          }),
        );
        return {
          perParam: (s.weightsBytes + s.gradientsBytes + s.optimizerBytes) / s.paramsPerRank,
          grads: s.gradientsBytes / s.paramsPerRank,
        };
      };
      // d = 8 data-parallel ranks: 2 (bf16 weights) + 4 (fp32 gradients) + 12/8.
      expect(states(true).perParam).toBeCloseTo(6 + 12 / 8, 9);
      expect(states(true).grads).toBe(4);
      expect(states(false).perParam).toBeCloseTo(4 + 12 / 8, 9);
    },
  );
});

describe('16-bit gradients reduced in fp32 (DeepSpeed communication_data_type fp32)', () => {
  it('keep 2 bytes of gradient per parameter, and each bucket buffer held gets its 4-byte copy (3× the bucket)', () => {
    const stage = (fp32Reduction: boolean) =>
      stageMemories(
        scenarioOf({
          name: 'g',
          cluster: { preset: 'dgx-a100-80gb', nodes: 1 },
          model: { ...gpt, tiedEmbeddings: false },
          training: { globalBatch: 16, microBatch: 1, precision: 'bf16' },
          parallel: { zero: 2, fp32Reduction, zeroConfig: { reduceBucketMB: 1, overlapComm: true } },
        }),
      )[0];
    const [bf16, fp32] = [stage(false), stage(true)];
    expect(fp32.gradientsBytes).toBe(bf16.gradientsBytes);
    // Two ipg buffers of 1 MiB with overlap_comm (stage_1_and_2.py), each with its fp32 copy of 2 MiB.
    expect(fp32.buffersBytes - bf16.buffersBytes).toBe(2 * 2 * MiB);
  });
});

describe('fp32 gradients in the step', () => {
  it('reduce twice the bytes over the data-parallel group', async () => {
    const { simulateStep } = await import('../../../src/sim/simulateStep.js');
    const total = (fp32Gradients: boolean) => {
      const r = simulateStep(
        scenarioOf({
          name: 'g',
          cluster: { preset: 'dgx-a100-80gb', nodes: 1 },
          model: { ...gpt, tiedEmbeddings: false },
          training: { globalBatch: 16, microBatch: 1, precision: 'bf16' },
          parallel: { fp32Gradients },
        }),
      ).result;
      return r.buckets.count * r.buckets.meanBytes;
    };
    expect(total(true) / total(false)).toBeCloseTo(2, 9);
  });
});

describe('tied embeddings over a pipeline, in the step', () => {
  const tiedRaw = (tiedEmbeddings: boolean, pp: number) => ({
    name: 't',
    cluster: { preset: 'dgx-a100-80gb', nodes: 2 },
    model: { ...gpt, vocab: 50304, tiedEmbeddings },
    training: { globalBatch: 16, microBatch: 1 },
    parallel: { tp: 2, pp, zero: 1 },
  });

  it(
    "reduce the last stage's copy with its gradients, " +
      'and all-reduce the embedding gradient between the first and last stage',
    async () => {
      const { simulateStep } = await import('../../../src/sim/simulateStep.js');
      const s = scenarioOf(tiedRaw(true, 2));
      const { plan } = simulateStep(s);
      // The step reduces what the memory account holds, stage by stage.
      expect(plan.stages.map((st) => st.gradients.paramsPerRank)).toEqual(stageMemories(s).map((m) => m.paramsPerRank));
      const syncs = plan.program.tasks.filter((t) => t.label.startsWith('all-reduce tied embedding gradients'));
      expect(syncs).toHaveLength(1); // symmetric: one simulated TP rank and replica, the others as shadows
      expect(syncs[0].collective).toMatchObject({ op: 'all_reduce', bytes: ((50304 * 4096) / 2) * 2 });
      // Both ends' optimizer steps wait for it.
      const optimizers = plan.program.tasks.filter((t) => t.kind === 'optimizer');
      expect(optimizers.length).toBe(2);
      for (const o of optimizers) expect(o.deps).toContain(syncs[0].id);
      // Every rank simulated: one all-reduce per pair of ends (TP rank × replica), each
      // gating exactly its own two ends.
      const fullRaw = { ...tiedRaw(true, 2), simulation: { fidelity: 'full' } };
      const full = simulateStep(scenarioOf(fullRaw)).plan.program.tasks;
      const pairs = full.filter((t) => t.label.startsWith('all-reduce tied embedding gradients'));
      expect(pairs).toHaveLength(2 * 4); // tp 2 × dp 4
      for (const o of full.filter((t) => t.kind === 'optimizer')) {
        const gating = pairs.filter((p) => o.deps.includes(p.id));
        expect(gating).toHaveLength(1);
        expect(gating[0].collective!.group).toContain(o.ranks[0]);
      }
      for (const [tied, pp] of [
        [false, 2],
        [true, 1],
      ] as const) {
        expect(
          simulateStep(scenarioOf(tiedRaw(tied, pp))).plan.program.tasks.some((t) =>
            t.label.startsWith('all-reduce tied embedding'),
          ),
        ).toBe(false);
      }
    },
  );
});

describe('gradient bucket buffers held', () => {
  const zero = (stage: number, overlapComm: boolean) =>
    stageMemories(
      scenarioOf({
        cluster: { preset: 'dgx-a100-80gb', nodes: 1 },
        model: { preset: 'llama2-7b', seqLen: 1024 },
        training: { globalBatch: 8 },
        parallel: { zero: stage, zeroConfig: { reduceBucketMB: 200, overlapComm } },
      }),
    )[0].buffersBytes;
  it(
    "are DeepSpeed's: one ipg buffer of reduce_bucket_size, " +
      'a second only with overlap_comm; one flat buffer at stage 3',
    () => {
      expect(zero(2, true)).toBe(2 * 200 * MiB);
      expect(zero(2, false)).toBe(200 * MiB);
      // Stage 3: its one flat buffer, next to the gathered 16-bit weights of the current and the prefetched layer.
      const gathered = 2 * 2 * largestLayerParameters(modelPreset('llama2-7b'));
      expect(zero(3, true)).toBe(200 * MiB + gathered);
      expect(zero(3, false)).toBe(200 * MiB + gathered);
    },
  );
});

describe('activations of an uneven interleaved split', () => {
  it('count the layers of the chunks actually in flight: the peak of their sum over the schedule', () => {
    const ops: PipeOp[] = [
      { kind: 'F', microBatch: 0, chunk: 0 },
      { kind: 'F', microBatch: 0, chunk: 1 },
      { kind: 'F', microBatch: 1, chunk: 0 },
      { kind: 'B', microBatch: 0, chunk: 1 },
      { kind: 'B', microBatch: 0, chunk: 0 },
      { kind: 'B', microBatch: 1, chunk: 0 },
    ];
    // Chunk 0 holds 3 layers, chunk 1 one: alive 3, 4, 7, 6, 3, 0.
    expect(peakLayersInFlight(ops, (c) => (c === 0 ? 3 : 1))).toBe(7);
    expect(peakInFlight(ops)).toBe(3);
  });

  it('a stage whose chunks are smaller than the others holds less than with the even split, a larger one more', () => {
    const at = (layersPerStage?: number[]) =>
      stageMemories(
        scenarioOf({
          name: 'u',
          cluster: { preset: 'dgx-a100-80gb', nodes: 1 },
          model: { ...gpt, layers: 24, tiedEmbeddings: true },
          training: { globalBatch: 64, microBatch: 1 },
          parallel: {
            tp: 2,
            pp: 4,
            schedule: 'interleaved',
            virtualStages: 3,
            ...(layersPerStage ? { layersPerStage } : {}),
          },
        }),
      );
    const even = at(); // 6 layers a stage: chunks of 2, 2, 2
    const uneven = at([4, 6, 6, 8]); // stage 0: 2, 1, 1; stage 3: 3, 3, 2
    expect(uneven[0].passesInFlight).toBe(even[0].passesInFlight);
    expect(uneven[0].activationsBytes).toBeLessThan(even[0].activationsBytes);
    expect(uneven[3].activationsBytes).toBeGreaterThan(even[3].activationsBytes);
    expect(uneven[1].activationsBytes).toBe(even[1].activationsBytes);
  });
});

describe('activations of the embedding under the interleaved schedule', () => {
  it('are kept by the passes through virtual stage 0 only, not by every chunk pass in flight on stage 0', () => {
    // GPT, tp 1, flash attention, no recompute: 34·s·b·h bytes a layer (Korthikanti et al.), the embedding's dropout
    // mask s·b·h. pp 4 × 2 chunks of 2 layers, 8 micro-batches: stage 0 warms up with (4 − 1)·2 + (2 − 1)·4 = 10
    // forwards (0–3 and 8–9 through chunk 0, 4–7 through chunk 1), then F10 (chunk 0), B0 (chunk 1), F11 (chunk 0):
    // 11 passes alive, 8 of them through chunk 0; the backwards that follow free chunk 1 passes first (B1–B3).
    const [stage0] = stageMemories(
      scenarioOf({
        name: 'emb',
        cluster: { preset: 'dgx-a100-80gb', nodes: 1, node: { gpusPerNode: 4, nicsPerNode: 1 } },
        model: { ...gpt, layers: 16, vocab: 128 },
        training: { globalBatch: 8, microBatch: 1, flashAttention: true },
        parallel: { pp: 4, schedule: 'interleaved', virtualStages: 2 },
      }),
    );
    const sbh = 2048 * 1 * 4096;
    expect(stage0.passesInFlight).toBe(11);
    expect(stage0.activationsBytes).toBe(11 * 2 * 34 * sbh + 8 * sbh);
  });
});

describe('activations of an MLP pipeline', () => {
  it(
    "count each stage's own linear layers (input and ReLU output, " +
      '2 bytes each), × the passes in flight, the fp32 output on the last',
    () => {
      // 4 linear layers of 1024 → 1024 over 4 stages, 1F1B, 4 micro-batches of 512 rows: stage s
      // holds 4 − s passes of one layer.
      const sizes = [1024, 1024, 1024, 1024, 1024];
      const st = stageMemories(
        scenarioOf({
          name: 'mlp',
          cluster: { preset: 'dgx-a100-80gb', nodes: 1, node: { gpusPerNode: 4, nicsPerNode: 1 } },
          model: { arch: 'mlp', layers: 4, hidden: 1024, seqLen: 1, vocab: 1, mlpSizes: sizes },
          training: { globalBatch: 2048, microBatch: 512 },
          parallel: { pp: 4 },
        }),
      );
      const rows = 512;
      const hiddenLayer = rows * 2 * (1024 + 1024); // input kept for the weight gradient, ReLU output for its backward
      const lastLayer = rows * 2 * 1024; // the output layer keeps its input only
      const head = 4 * rows * 1024; // fp32 output for the loss
      expect(st.map((x) => x.passesInFlight)).toEqual([4, 3, 2, 1]);
      expect(st[0].activationsBytes).toBe(4 * hiddenLayer);
      expect(st[1].activationsBytes).toBe(3 * hiddenLayer);
      expect(st[2].activationsBytes).toBe(2 * hiddenLayer);
      expect(st[3].activationsBytes).toBe(lastLayer + head);
    },
  );
});
