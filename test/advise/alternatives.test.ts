import { describe, expect, it } from 'vitest';
import { BUBBLE_SHARE_TO_TRADE, candidateChanges } from '../../src/advise/alternatives.js';
import { evaluateAlternatives } from '../../src/advise/evaluate.js';
import type { Candidate } from '../../src/advise/alternatives.js';
import { simulateStep } from '../../src/sim/simulateStep.js';
import { scenarioOf } from '../helpers/scenario.js';

/** Candidates for a raw scenario, and the raw scenario to simulate them on. */
function candidates(raw: Record<string, unknown>) {
  const s = scenarioOf(raw);
  const r = simulateStep(s).result;
  return { raw, s, r, list: candidateChanges(s, r) };
}

/** The alternatives simulated on top of `raw` (one thread, as the test runner has no compiled worker). */
function tryAlternatives(raw: unknown, candidates: Candidate[], limit: number, onStart?: (label: string) => void) {
  return evaluateAlternatives({ raw, baseSets: [], source: 'test', baseDir: process.cwd(), candidates }, limit, {
    jobs: 1,
    onStart,
  });
}

const gpt = {
  arch: 'gpt',
  layers: 8,
  hidden: 2048,
  heads: 16,
  ffnHidden: 8192,
  seqLen: 1024,
  vocab: 51200,
  tiedEmbeddings: true,
};

describe('what to try: candidate changes from what bounds the step', () => {
  it('pads a vocabulary that misses the tensor-core alignment, first, and the padded run is faster', async () => {
    const raw = {
      name: 'bert',
      cluster: { preset: 'dgx-a100-80gb', nodes: 1 },
      model: { preset: 'bert-large' },
      training: { globalBatch: 64, microBatch: 8, precision: 'bf16' },
      parallel: { dp: 8 },
    };
    const { s, r, list } = candidates(raw);
    expect(list[0]).toEqual({
      label: 'vocabulary padded to 30528 (aligned LM-head GEMMs)',
      sets: ['model.vocab=30528'],
    });
    const started: string[] = [];
    const [padded] = await tryAlternatives(raw, list.slice(0, 1), 1, (label) => started.push(label));
    expect(padded.stepTimeS!).toBeLessThan(r.stepTimeS);
    expect(started).toEqual([list[0].label]); // each simulation is announced before it runs
    expect(s.model.vocab).toBe(30522);
  });

  it(
    'offers bf16 Adam moments when the job does not fit, ' +
      'with less optimizer memory, and not once the state is reduced',
    async () => {
      const raw = {
        name: 'oom',
        cluster: { preset: 'dgx-a100-80gb', nodes: 1 },
        model: { preset: 'llama2-13b', seqLen: 1024 },
        training: { globalBatch: 8, microBatch: 1, precision: 'bf16' },
        parallel: { dp: 8 },
      };
      const { r, list } = candidates(raw);
      expect(r.memory.gpuFits).toBe(false);
      const bf16 = list.find((c) => c.sets.includes('training.optimizerState.momentum=bf16'));
      expect(bf16).toEqual({
        label: 'bf16 Adam moments (changes the numerics)',
        sets: ['training.optimizerState.momentum=bf16', 'training.optimizerState.variance=bf16'],
      });
      const [tried] = await tryAlternatives(raw, [bf16!], 1);
      expect(tried.peakBytesPerGpu!).toBeLessThan(r.memory.peakBytesPerGpu);
      // Once a moment is reduced, only the other is offered; once both are, neither; offload is not offered with them.
      const reduced = candidates({ ...raw, training: { ...raw.training, optimizerState: { momentum: 'bf16' } } });
      expect(reduced.list.filter((c) => c.sets.some((x) => x.startsWith('training.optimizerState')))).toEqual([
        { label: 'bf16 Adam variance (changes the numerics)', sets: ['training.optimizerState.variance=bf16'] },
      ]);
      const big = { ...raw, model: { preset: 'llama2-70b', seqLen: 1024 }, parallel: { dp: 8, zero: 1 } };
      expect(candidates(big).list.some((c) => c.sets.includes('parallel.offload=cpu'))).toBe(true);
      const both = candidates({
        ...big,
        training: { ...raw.training, optimizerState: { momentum: 'bf16', variance: 'fp8' } },
      });
      expect(both.r.memory.gpuFits).toBe(false);
      expect(both.list.some((c) => c.sets.some((x) => x.startsWith('training.optimizerState')))).toBe(false);
      expect(both.list.some((c) => c.sets.includes('parallel.offload=cpu'))).toBe(false);
    },
  );

  it(
    "offers Megatron's --overlap-param-gather when the weight " +
      'all-gather after the optimizer leads the exposed communication',
    async () => {
      const raw = {
        name: 'g',
        cluster: { preset: 'dgx-h100', nodes: 4 },
        model: { preset: 'llama2-7b', seqLen: 2048 },
        training: { globalBatch: 64, microBatch: 2 },
        parallel: { zero: 1 },
      };
      const { r, list } = candidates(raw);
      expect(r.bottleneck.exposure[0].kind).toBe('dp-allgather');
      const gather = list.find((c) => c.sets.includes('parallel.overlapParamGather=true'));
      expect(gather?.label).toBe('weight all-gather under the next forward (Megatron --overlap-param-gather)');
      const [tried] = await tryAlternatives(raw, [gather!], 1);
      expect(tried.stepTimeS!).toBeLessThan(r.stepTimeS);
      const on = candidates({ ...raw, parallel: { zero: 1, overlapParamGather: true } });
      expect(on.list.some((c) => c.sets.includes('parallel.overlapParamGather=true'))).toBe(false);
      // A candidate that leaves ZeRO-1 turns the overlapped gather off with it, so it resolves
      // (a review found them dropped).
      const oom = {
        ...raw,
        model: { preset: 'llama2-13b', seqLen: 2048 },
        cluster: { preset: 'dgx-a100-80gb', nodes: 2 },
        parallel: { zero: 1, overlapParamGather: true },
      };
      const big = candidates(oom);
      expect(big.r.memory.gpuFits).toBe(false);
      const zero2 = big.list.find((c) => c.sets.includes('parallel.zero=2'));
      expect(zero2?.sets).toContain('parallel.overlapParamGather=false');
      expect((await tryAlternatives(oom, [zero2!], 1))[0].stepTimeS).toBeGreaterThan(0);
    },
  );

  it(
    'when only the host memory is short under CPU offload: ' +
      'says the step does not fit, and offers the state back on the GPUs or twice the nodes',
    async () => {
      const raw = {
        name: 'h',
        cluster: { preset: 'dgx-a100-80gb', nodes: 1, node: { hostMemoryGiB: 64 } },
        model: { preset: 'llama2-7b', seqLen: 1024 },
        training: { globalBatch: 16, microBatch: 1 },
        parallel: { zero: 3, offload: 'cpu' },
      };
      const { r, list } = candidates(raw);
      expect(r.memory.gpuFits).toBe(true);
      expect(r.memory.host?.fits).toBe(false);
      expect(r.memory.fits).toBe(false); // the job's verdict counts the host
      expect(r.bottleneck.bound).toBe('memory'); // simulateStep passes the host shortfall to the diagnosis
      const wanted = list.filter((c) => c.sets.includes('parallel.offload=none') || c.sets.includes('cluster.nodes=2'));
      expect(wanted.map((c) => c.label)).toEqual(['no optimizer offload (state on the GPUs)', 'twice the nodes (2)']);
      const [noOffload, twice] = await tryAlternatives(raw, wanted, 2);
      expect(noOffload.fits).toBe(true);
      expect(twice.fits).toBe(true); // 64 GiB per node holds half the state
      const [stillOffloaded] = await tryAlternatives(raw, [{ label: 'mb 2', sets: ['training.microBatch=2'] }], 1);
      expect(stillOffloaded.fits).toBe(false); // GPU memory fits, host memory does not
    },
  );

  it('offers fused element-wise kernels to an eager Llama run, and the simulated step is faster', async () => {
    const raw = {
      name: 'e',
      cluster: { preset: 'dgx-a100-80gb', nodes: 1 },
      model: { preset: 'llama2-7b', seqLen: 2048 },
      training: { globalBatch: 8, microBatch: 1, kernels: 'eager' },
      parallel: { zero: 3 },
    };
    const { r, list } = candidates(raw);
    const fused = list.find((c) => c.sets.includes('training.kernels=fused'));
    expect(fused?.label).toBe('fused element-wise kernels (torch.compile)');
    const [sim] = await tryAlternatives(raw, [fused!], 1);
    expect(sim.stepTimeS!).toBeLessThan(r.stepTimeS);
    expect(
      candidates({ ...raw, training: { globalBatch: 8, microBatch: 1 } }).list.some((c) =>
        c.sets.includes('training.kernels=fused'),
      ),
    ).toBe(false);
  });

  it('offers no padding when the vocabulary per rank is aligned (Llama-2: 32000) or the model has none', async () => {
    const pads = (raw: Record<string, unknown>) =>
      candidates(raw).list.some((c) => c.sets.some((x) => x.startsWith('model.vocab')));
    expect(
      pads({
        name: 'l',
        cluster: { preset: 'dgx-a100-80gb', nodes: 1 },
        model: { preset: 'llama2-7b' },
        training: { globalBatch: 16, microBatch: 1, precision: 'bf16' },
        parallel: { tp: 2, dp: 4 },
      }),
    ).toBe(false);
    // The small classifier's output layer (10 classes) is misaligned, but it has no vocabulary to pad.
    expect(
      pads({
        name: 'm',
        cluster: { preset: 'dgx-a100-80gb', nodes: 1 },
        model: { preset: 'mlp-small' },
        training: { globalBatch: 64, microBatch: 8, precision: 'bf16' },
        parallel: { dp: 8 },
      }),
    ).toBe(false);
  });

  it(
    'keeps tensor parallelism inside the node when it spans nodes, ' + 'and the simulated alternative is faster',
    async () => {
      const raw = {
        name: 'tp16',
        cluster: { preset: 'dgx-a100-80gb', nodes: 2 },
        model: gpt,
        training: { globalBatch: 16, microBatch: 2, precision: 'bf16' },
        parallel: { tp: 16 },
      };
      const { r, list } = candidates(raw);
      const inside = list.find((c) => c.label === 'tp 8 inside the node, pp 2');
      expect(inside?.sets).toEqual(['parallel.tp=8', 'parallel.pp=2']);
      const [alt] = await tryAlternatives(raw, [inside!], 1);
      expect(alt.stepTimeS!).toBeLessThan(r.stepTimeS);
    },
  );

  it('suggests ZeRO-2 for ZeRO-3, and interleaving for a 1F1B pipeline whose micro-batches allow it', async () => {
    const z3 = candidates({
      name: 'z3',
      cluster: { preset: 'pcie-8gpu', nodes: 1, gpu: 'a100-sxm4-80gb' },
      model: gpt,
      training: { globalBatch: 16, microBatch: 2, precision: 'bf16' },
      parallel: { zero: 3 },
    });
    expect(z3.list.map((c) => c.label)).toContain('ZeRO-2 instead of ZeRO-3');
    const pp = candidates({
      name: 'pp',
      cluster: { preset: 'dgx-a100-80gb', nodes: 1 },
      model: gpt,
      training: { globalBatch: 16, microBatch: 2, precision: 'bf16' },
      parallel: { pp: 2, dp: 4, schedule: '1f1b' },
    });
    expect(pp.list.find((c) => c.label.startsWith('interleaved'))?.sets).toEqual([
      'parallel.schedule=interleaved',
      'parallel.virtualStages=2',
    ]);
  });

  it(
    'fills a bubble-bound pipeline: interleaving with the chunks its layers ' +
      'split into (not only 2), and half the stages for twice the tp, both faster',
    async () => {
      // 10 layers over pp 2: 5 per stage, which 2 chunks cannot split; 2 micro-batches over 2 stages: the
      // bubble is (p−1)/(m+p−1) = 1/3.
      const raw = {
        name: 'pp',
        cluster: { preset: 'dgx-a100-80gb', nodes: 1 },
        model: { ...gpt, layers: 10 },
        training: { globalBatch: 8, microBatch: 1, precision: 'bf16' },
        parallel: { pp: 2, dp: 4, schedule: '1f1b' },
      };
      const { r, list } = candidates(raw);
      expect(r.breakdown.bubbleS / r.stepTimeS).toBeGreaterThan(BUBBLE_SHARE_TO_TRADE);
      const interleaved = list.filter((c) => c.label.startsWith('interleaved'));
      expect(interleaved.map((c) => c.sets)).toEqual([['parallel.schedule=interleaved', 'parallel.virtualStages=5']]);
      const trade = list.find((c) => c.sets.includes('parallel.pp=1'));
      expect(trade?.sets).toEqual(['parallel.tp=2', 'parallel.pp=1']);
      const tried = await tryAlternatives(raw, [...interleaved, trade!], 2);
      expect(tried).toHaveLength(2);
      for (const alt of tried) expect(alt.stepTimeS!).toBeLessThan(r.stepTimeS);
      // With 12 layers per stage: the fewest chunks (2) and one layer per chunk (12).
      const deep = candidates({ ...raw, model: { ...gpt, layers: 24 } });
      expect(deep.list.filter((c) => c.label.startsWith('interleaved')).map((c) => c.sets[1])).toEqual([
        'parallel.virtualStages=2',
        'parallel.virtualStages=12',
      ]);
      // Not offered where it cannot resolve or would leave the node or Megatron's rules: an uneven split's counts are
      // per stage; 2 KV heads do not split over tp 4; tp 6 groups do not tile 8-GPU nodes.
      const uneven = candidates({ ...raw, parallel: { ...raw.parallel, layersPerStage: [4, 6] } });
      expect(uneven.list.some((c) => c.sets.includes('parallel.pp=1'))).toBe(false);
      const gqa = candidates({
        ...raw,
        model: { ...gpt, layers: 10, kvHeads: 2 },
        parallel: { ...raw.parallel, tp: 2, dp: 2 },
      });
      expect(gqa.r.breakdown.bubbleS / gqa.r.stepTimeS).toBeGreaterThan(BUBBLE_SHARE_TO_TRADE);
      expect(gqa.list.some((c) => c.sets.includes('parallel.tp=4'))).toBe(false);
      const gqa4 = candidates({
        ...raw,
        model: { ...gpt, layers: 10, kvHeads: 4 },
        parallel: { ...raw.parallel, tp: 2, dp: 2 },
      });
      expect(gqa4.list.find((c) => c.sets.includes('parallel.tp=4'))?.sets).toEqual(['parallel.tp=4', 'parallel.pp=1']);
      // An odd micro-batch halves to what the override sets.
      const odd = candidates({ ...raw, training: { globalBatch: 24, microBatch: 3, precision: 'bf16' } });
      expect(odd.list.find((c) => c.sets.includes('training.microBatch=1'))?.label).toBe(
        'micro-batch 1 (more micro-batches fill the pipeline)',
      );
    },
  );

  it('when the job does not fit, tries memory savers first (recompute before anything else)', async () => {
    const big = { ...gpt, layers: 48, hidden: 8192, heads: 64, ffnHidden: 32768 };
    const { r, list } = candidates({
      name: 'oom',
      cluster: { preset: 'dgx-a100-80gb', nodes: 1 },
      model: big,
      training: { globalBatch: 8, microBatch: 1, precision: 'bf16' },
      parallel: { dp: 8 },
    });
    expect(r.memory.fits).toBe(false);
    expect(list[0]).toEqual({ label: 'full activation recompute', sets: ['parallel.recompute=full'] });
    expect(list.map((c) => c.label)).toContain('ZeRO-1');
  });

  it(
    'offers 1F1B first to a GPipe pipeline that does not fit: ' +
      'p micro-batches in flight instead of m, in the same time',
    async () => {
      // 16 micro-batches over pp 4: GPipe keeps all 16 alive on every stage, 1F1B at most 4 (stage 0).
      const raw = {
        name: 'gpipe',
        cluster: { preset: 'dgx-a100-80gb', nodes: 1, node: { gpusPerNode: 4, nicsPerNode: 1 } },
        model: { arch: 'gpt', layers: 32, hidden: 2048, heads: 16, seqLen: 2048, vocab: 128 },
        training: { globalBatch: 128, microBatch: 8 },
        parallel: { pp: 4, schedule: 'gpipe' },
      };
      const { r, list } = candidates(raw);
      expect(r.memory.fits).toBe(false);
      expect(list[0].sets).toEqual(['parallel.schedule=1f1b']);
      // Halving the micro-batch under GPipe doubles the micro-batches, all in flight: no
      // memory saved, not offered for it.
      expect(list.some((c) => c.label === 'micro-batch 4')).toBe(false);
      const [alt] = await tryAlternatives(raw, [list[0]], 1);
      expect(alt.fits).toBe(true);
      expect(alt.peakBytesPerGpu!).toBeLessThan(r.memory.peakBytesPerGpu);
      expect(Math.abs(alt.stepTimeS! - r.stepTimeS) / r.stepTimeS).toBeLessThan(0.01);
    },
  );

  it(
    'does not offer 1F1B to a GPipe pipeline with no more ' + 'micro-batches than stages: 1F1B holds all of them too',
    () => {
      // 4 micro-batches of 32 over pp 4: stage 0 keeps 4 in flight under either schedule.
      const raw = {
        name: 'gpipe',
        cluster: { preset: 'dgx-a100-80gb', nodes: 1, node: { gpusPerNode: 4, nicsPerNode: 1 } },
        model: { arch: 'gpt', layers: 32, hidden: 2048, heads: 16, seqLen: 2048, vocab: 128 },
        training: { globalBatch: 128, microBatch: 32 },
        parallel: { pp: 4, schedule: 'gpipe' },
      };
      const { r, list } = candidates(raw);
      expect(r.microBatchesPerStep).toBe(4);
      expect(r.memory.fits).toBe(false);
      expect(list.some((c) => c.sets.includes('parallel.schedule=1f1b'))).toBe(false);
    },
  );

  it(
    'offers no higher ZeRO stage where nothing is sharded (dp 1), ' +
      'and ZeRO-3 with offload where each alone is not enough',
    async () => {
      const alone = candidates({
        name: 'tp8',
        cluster: { preset: 'dgx-a100-80gb', nodes: 1 },
        model: { preset: 'llama2-70b', seqLen: 4096 },
        training: { globalBatch: 8, microBatch: 1 },
        parallel: { tp: 8, sequenceParallel: true, zero: 1, recompute: 'full' },
      });
      expect(alone.r.memory.gpuFits).toBe(false);
      expect(alone.list.map((c) => c.label)).not.toContain('ZeRO-2');
      expect(alone.list.map((c) => c.label)).toContain('optimizer offload to CPU');
      const raw = {
        name: 'z2',
        cluster: { preset: 'dgx-a100-80gb', nodes: 1 },
        model: { preset: 'llama2-70b', seqLen: 4096 },
        training: { globalBatch: 32, microBatch: 1, precision: 'bf16' },
        parallel: { zero: 2, recompute: 'full' },
      };
      const { list } = candidates(raw);
      const both = list.find((c) => c.label === 'ZeRO-3 with optimizer offload to CPU')!;
      // ZeRO-3 does not combine with context parallelism: not offered there.
      const cp = candidates({ ...raw, name: 'cp', parallel: { zero: 2, recompute: 'full', cp: 2 } });
      expect(cp.list.map((c) => c.label).filter((l) => l.startsWith('ZeRO-3'))).toEqual([]);
      expect(both.sets).toEqual(['parallel.zero=3', 'parallel.offload=cpu']);
      const tried = await tryAlternatives(
        raw,
        list.filter((c) => c.label.startsWith('ZeRO-3') || c.label.startsWith('optimizer offload')),
        3,
      );
      expect(tried.map((a) => [a.label, a.fits])).toEqual([
        ['ZeRO-3', false],
        ['optimizer offload to CPU', false],
        ['ZeRO-3 with optimizer offload to CPU', true],
      ]);
    },
  );

  it(
    'offers context parallelism to a long sequence whose activations fill the GPU, ' +
      'with the cp that makes room, and the ring for blocking exchanges',
    async () => {
      const raw = {
        name: 'long',
        cluster: { preset: 'dgx-h100', nodes: 1 },
        model: { preset: 'llama3-8b', seqLen: 32768 },
        training: { globalBatch: 8, microBatch: 1, seqLen: 32768, precision: 'bf16', flashAttention: true },
        parallel: { zero: 1 },
      };
      const { r, list } = candidates(raw);
      expect(r.memory.gpuFits).toBe(false);
      const cp = list.find((c) => c.label.startsWith('context parallel'))!;
      // Activations are most of the memory, so it comes right after recompute.
      expect(list.indexOf(cp)).toBe(1);
      const [tried] = await tryAlternatives(raw, [cp], 1);
      expect(tried.fits).toBe(true);
      const blocking = candidates({ ...raw, parallel: { zero: 1, cp: 8, cpCommType: 'all_gather', dp: 1 } });
      expect(blocking.r.bottleneck.exposure[0].kind).toBe('cp-exchange');
      expect(blocking.list.map((c) => c.sets.join(' '))).toContain('parallel.cpCommType=p2p');
    },
  );
});

describe('what to try: FP8 GEMMs', () => {
  const raw = (preset: string, training: Record<string, unknown> = {}) => ({
    name: 'fp8',
    cluster: { preset, nodes: 1 },
    model: { preset: 'llama3-8b', layers: 4, seqLen: 4096 },
    training: { globalBatch: 32, microBatch: 1, precision: 'bf16', ...training },
    parallel: { zero: 1 },
  });
  const offersFp8 = (r: Record<string, unknown>) =>
    candidates(r).list.some((c) => c.sets.join(' ') === 'training.precision=fp8');

  it('offers FP8 to a compute-bound bf16 step on Hopper, and the FP8 step is faster', async () => {
    const { r, list } = candidates(raw('dgx-h100'));
    expect(r.bottleneck.bound).toBe('compute');
    const fp8 = list.find((c) => c.sets.join(' ') === 'training.precision=fp8')!;
    expect(fp8.label).toMatch(/changes the numerics/);
    const [tried] = await tryAlternatives(raw('dgx-h100'), [fp8], 1);
    expect(tried.stepTimeS).toBeLessThan(r.stepTimeS);
  });

  it('offers none on a GPU without an FP8 peak, nor under the Megatron-DeepSpeed model, which has no FP8 path', () => {
    expect(offersFp8(raw('dgx-a100-80gb'))).toBe(false);
    expect(offersFp8(raw('dgx-h100', { framework: 'megatron-deepspeed' }))).toBe(false);
  });
});

describe("what to try on a GPU of the scenario's own", () => {
  it(
    "offers neither FlashAttention-3 nor Transformer Engine's " +
      "overlap to a GPU that borrows a Hopper preset's figures",
    () => {
      const base = {
        cluster: { preset: 'dgx-h100', nodes: 1 },
        model: gpt,
        training: { globalBatch: 8, microBatch: 1 },
        parallel: { tp: 8, dp: 1, sequenceParallel: true },
      };
      const labels = (raw: Record<string, unknown>) => candidates(raw).list.map((c) => c.label);
      // On the H100 itself FlashAttention-3 is offered.
      expect(labels(base)).toContain('FlashAttention-3 (Hopper)');
      const own = labels({
        ...base,
        cluster: { ...base.cluster, gpu: { name: 'mi300x', peakTflops: { bf16: 1307 }, memoryGiB: 192 } },
      });
      expect(own).not.toContain('FlashAttention-3 (Hopper)');
      expect(own.some((l) => l.includes('Transformer Engine'))).toBe(false);
    },
  );
});
