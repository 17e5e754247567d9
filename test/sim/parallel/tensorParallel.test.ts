import { describe, expect, it } from 'vitest';
import { simulateStep } from '../../../src/sim/simulateStep.js';
import { compileStep } from '../../../src/sim/parallel/stepCompiler.js';
import { ParallelLayout } from '../../../src/sim/parallel/layout.js';
import { scenarioOf } from '../../helpers/scenario.js';

const L = 4;
const T = 2048 * 2; // tokens per micro-batch: seq 2048 × micro-batch 2
const H = 2048;

function gpt(parallel: Record<string, unknown>, nodes = 1, cluster: Record<string, unknown> = {}) {
  return scenarioOf({
    cluster: { preset: 'dgx-a100-80gb', nodes, ...cluster },
    model: { arch: 'gpt', layers: L, hidden: H, heads: 16, seqLen: 2048, vocab: 32000 },
    training: { globalBatch: (2 * (8 * nodes)) / ((parallel.tp as number) ?? 1), microBatch: 2 },
    parallel,
  });
}

function tpTasks(parallel: Record<string, unknown>) {
  const plan = compileStep(gpt(parallel));
  const group = plan.layout.tpGroup(0, 0);
  return plan.program.tasks.filter((t) => t.kind === 'tp-collective' && t.collective!.group === group);
}

const isCrossEntropy = (label: string) => label.includes('cross-entropy');

/** The TP collectives of the layers, embedding and LM head (the loss's own all-reduces left out). */
function tpCollectives(parallel: Record<string, unknown>) {
  return tpTasks(parallel)
    .filter((t) => !isCrossEntropy(t.label))
    .map((t) => t.collective!);
}

describe('rank placement', () => {
  it('numbers ranks TP fastest, then DP, then PP, as Megatron does', () => {
    const l = new ParallelLayout(2, 3, 4);
    expect(l.tpGroup(0, 0)).toEqual([0, 1]);
    expect(l.dpGroup(0, 0)).toEqual([0, 2, 4]);
    expect(l.rank(1, 2, 3)).toBe(3 * 6 + 2 * 2 + 1);
    for (let r = 0; r < 24; r++) {
      const c = l.coords(r);
      expect(l.rank(c.t, c.d, c.p)).toBe(r);
    }
  });

  it('keeps a TP group of 8 inside one DGX node', () => {
    const l = new ParallelLayout(8, 2, 2);
    for (let d = 0; d < 2; d++)
      for (let p = 0; p < 2; p++) expect(new Set(l.tpGroup(d, p).map((g) => Math.floor(g / 8))).size).toBe(1);
  });
});

describe('Megatron tensor parallelism', () => {
  it("puts two all-reduces of s·b·h in each layer's forward and two in its backward", () => {
    const c = tpCollectives({ tp: 2 });
    // Per layer 2 + 2; the vocab-parallel embedding adds one forward, the LM head's input gradient one backward.
    expect(c.length).toBe(4 * L + 2);
    for (const x of c) {
      expect(x.op).toBe('all_reduce');
      expect(x.bytes).toBe(T * H * 2);
    }
  });

  it('all-reduces three fp32 values per token for the vocab-parallel cross-entropy, with or without SP', () => {
    for (const parallel of [{ tp: 2 }, { tp: 2, sequenceParallel: true }, { tp: 2, recompute: 'full' }]) {
      const ce = tpTasks(parallel)
        .filter((t) => isCrossEntropy(t.label))
        .map((t) => t.collective!);
      // One micro-batch per replica here (global batch 8 = micro-batch 2 × dp 4): max, target logit, sum of exp.
      expect(ce.map((x) => [x.op, x.bytes])).toEqual(Array.from({ length: 3 }, () => ['all_reduce', T * 4]));
    }
    // A vocabulary gathered whole on every rank (all-gather style) needs none, nor does tp 1.
    expect(tpTasks({ tp: 2, tpStyle: 'allgather' }).filter((t) => isCrossEntropy(t.label))).toEqual([]);
    expect(compileStep(gpt({ tp: 1 })).program.tasks.filter((t) => isCrossEntropy(t.label))).toEqual([]);
  });

  it(
    'splits an MLP as Megatron pairs its layers: ' +
      'a row-parallel layer all-reduces its output, a column-parallel one its input gradient',
    () => {
      const mlp = (mlpSizes: number[]) =>
        compileStep(
          scenarioOf({
            cluster: { preset: 'dgx-a100-80gb', nodes: 1 },
            model: { arch: 'mlp', layers: mlpSizes.length - 1, hidden: mlpSizes[1], seqLen: 1, vocab: 1, mlpSizes },
            training: { globalBatch: 32, microBatch: 8 },
            parallel: { tp: 2 },
          }),
        );
      const labels = (sizes: number[]) => {
        const plan = mlp(sizes);
        const group = plan.layout.tpGroup(0, 0);
        return plan.program.tasks
          .filter((t) => t.kind === 'tp-collective' && t.collective!.group === group)
          .map((t) => [t.label, t.collective!.bytes]);
      };
      // Two layers (one micro-batch of 8 rows per replica): column then row, so the output is
      // whole and the loss needs nothing.
      expect(labels([1024, 512, 10])).toEqual([['TP all-reduce fc1', 8 * 10 * 2]]);
      // Three: the last layer is column-parallel again; its input gradient is reduced, its split
      // outputs need the loss's three.
      expect(
        labels([1024, 512, 256, 10])
          .map(([l, b]) => `${l} ${b}`)
          .sort(),
      ).toEqual([
        `TP all-reduce cross-entropy max ${8 * 4}`,
        `TP all-reduce cross-entropy sum of exp ${8 * 4}`,
        `TP all-reduce cross-entropy target logit ${8 * 4}`,
        `TP all-reduce fc1 ${8 * 256 * 2}`,
        `TP all-reduce fc2.dgrad ${8 * 256 * 2}`,
      ]);
      // With a pipeline, the input gradient is reduced before the pass ends (and its send to the previous stage), not
      // carried into the stage's next pass.
      const piped = compileStep(
        scenarioOf({
          cluster: { preset: 'dgx-a100-80gb', nodes: 1 },
          model: { arch: 'mlp', layers: 4, hidden: 512, seqLen: 1, vocab: 1, mlpSizes: [1024, 512, 512, 512, 10] },
          training: { globalBatch: 16, microBatch: 4 },
          parallel: { tp: 2, pp: 2 },
        }),
      );
      const tasks = piped.program.tasks;
      const reductions = tasks.filter((t) => t.label.startsWith('TP all-reduce fc2.dgrad'));
      expect(reductions.length).toBeGreaterThan(0);
      for (const r of reductions) {
        const waiters = tasks.filter((t) => t.deps.includes(r.id));
        expect(waiters.length).toBeGreaterThan(0);
        for (const w of waiters) expect(w.microBatch).toBe(r.microBatch);
      }
    },
  );

  it('turns them into all-gather / reduce-scatter pairs with sequence parallelism', () => {
    const c = tpCollectives({ tp: 2, sequenceParallel: true });
    const count = (op: string) => c.filter((x) => x.op === op).length;
    // Forward per layer: all-gather before QKV and FC1, reduce-scatter after proj and FC2.
    // Backward per layer: all-gather of the gradient before proj and FC2 dgrad, re-gather of the inputs for
    // the QKV and FC1 weight gradients, reduce-scatter of their input gradients. The embedding adds a
    // reduce-scatter; the LM head an all-gather before it, a re-gather for its weight gradient and a
    // reduce-scatter of its input gradient.
    expect(count('reduce_scatter')).toBe(4 * L + 2);
    expect(count('all_gather')).toBe(6 * L + 2);
    expect(count('all_reduce')).toBe(0);
  });

  it('repeats the forward collectives when the layer is recomputed in full', () => {
    expect(tpCollectives({ tp: 2, recompute: 'full' }).length).toBe(6 * L + 2);
  });

  it('gathers every linear output and all-reduces every input gradient in the all-gather style', () => {
    const c = tpCollectives({ tp: 2, tpStyle: 'allgather' });
    expect(c.filter((x) => x.op === 'all_gather').length).toBe(4 * L + 1);
    expect(c.filter((x) => x.op === 'all_reduce').length).toBe(4 * L + 2);
  });

  it('splits the compute of a layer over the TP ranks', () => {
    const one = simulateStep(gpt({ tp: 1 })).result;
    const two = simulateStep(gpt({ tp: 2 })).result;
    // Same global batch per TP group; each rank computes about half, plus the replicated work.
    expect(two.breakdown.computeS).toBeLessThan(one.breakdown.computeS * 0.62);
    expect(two.breakdown.exposedCommS).toBeGreaterThan(0);
  });

  it('says so when TP groups leave the node, and pays for it per collective', () => {
    const meanTpNs = (run: ReturnType<typeof simulateStep>) => {
      const tasks = run.plan.program.tasks.filter(
        (t) => t.kind === 'tp-collective' && t.collective!.bytes === T * H * 2,
      );
      return tasks.reduce((a, t) => a + run.trace.endNs[t.id] - run.trace.startNs[t.id], 0) / tasks.length;
    };
    // Over 25 Gb/s Ethernet the NICs are far slower than NVLink, so TP groups that span nodes pay for it.
    const inside = simulateStep(gpt({ tp: 8 }, 2, { network: 'roce-25' }));
    const across = simulateStep(gpt({ tp: 16 }, 2, { network: 'roce-25' }));
    expect(inside.result.notes.join(' ')).not.toMatch(/cross/);
    expect(across.result.notes.join(' ')).toMatch(/cross the NICs/);
    expect(meanTpNs(across)).toBeGreaterThan(3 * meanTpNs(inside));
  });

  it('is slower over PCIe than over NVSwitch for the same split', () => {
    const nv = simulateStep(gpt({ tp: 8 })).result;
    const pcie = simulateStep(gpt({ tp: 8 }, 1, { preset: 'pcie-8gpu' })).result;
    expect(pcie.breakdown.exposedCommS).toBeGreaterThan(3 * nv.breakdown.exposedCommS);
    expect(pcie.notes.join(' ')).toMatch(/PCIe/);
  });
});

describe('TP collectives of heads with a width of their own (headDim ≠ hidden / heads)', () => {
  it('gather the QKV output and reduce the projection input at heads × headDim wide (allgather style)', async () => {
    const { tpSyncPoints } = await import('../../../src/sim/parallel/tpSync.js');
    const { modelPreset } = await import('../../../src/sim/workload/modelPresets.js');
    // Mistral NeMo's shape: 32 heads and 8 key/value heads of 128 on a width of 5120.
    const model = { ...modelPreset('llama2-7b'), hidden: 5120, heads: 32, kvHeads: 8, headDim: 128, ffnHidden: 14336 };
    const ctx = { model, tp: 8, sequenceParallel: false, style: 'allgather' as const, tokens: 1000, elementBytes: 2 };
    const bytesOf = (label: string) =>
      tpSyncPoints(['qkv', 'proj', 'proj.dgrad', 'qkv.dgrad'], ctx).find((s) => s.label === label)!.bytes;
    expect(bytesOf('TP all-gather qkv')).toBe(1000 * (32 + 2 * 8) * 128 * 2);
    expect(bytesOf('TP all-gather proj')).toBe(1000 * 5120 * 2);
    expect(bytesOf('TP all-reduce proj.dgrad')).toBe(1000 * 32 * 128 * 2);
    expect(bytesOf('TP all-reduce qkv.dgrad')).toBe(1000 * 5120 * 2);
  });
});
