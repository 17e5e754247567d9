import { describe, expect, it } from 'vitest';
import { simulateStep } from '../../../src/sim/simulateStep.js';
import { compileStep } from '../../../src/sim/parallel/stepCompiler.js';
import { ParallelLayout } from '../../../src/sim/parallel/layout.js';
import { stageMemories } from '../../../src/sim/memory/stageMemory.js';
import { buildBlocks } from '../../../src/sim/workload/transformerOps.js';
import { InvalidScenarioError } from '../../../src/scenario/errors.js';
import { scenarioOf } from '../../helpers/scenario.js';

const S = 8192;
const H = 4096;
const HEADS = 32;
const KV = 8;

/** A Llama-style model on one or more H100 nodes, one sequence per micro-batch. */
function llama(parallel: Record<string, unknown>, opts: { nodes?: number; globalBatch?: number; layers?: number; training?: Record<string, unknown> } = {}) {
  return scenarioOf({
    cluster: { preset: 'dgx-h100', nodes: opts.nodes ?? 1 },
    model: { arch: 'llama', layers: opts.layers ?? 4, hidden: H, heads: HEADS, kvHeads: KV, ffnHidden: 14336, seqLen: S, vocab: 32000 },
    training: { globalBatch: opts.globalBatch ?? 8, microBatch: 1, precision: 'bf16', flashAttention: true, ...opts.training },
    parallel,
  });
}

function problems(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    if (err instanceof InvalidScenarioError) return err.problems.map((p) => `${p.path}: ${p.message}`);
    throw err;
  }
  return [];
}

describe('context-parallel rank placement', () => {
  it('puts the cp ranks of a replica right after tp, as Megatron orders them (tp-cp-dp-pp)', () => {
    const l = new ParallelLayout(2, 2, 2, 'tp-dp-pp', 2);
    expect(l.world).toBe(16);
    expect(l.dp).toBe(4);
    expect(l.cpGroup(0, 0, 0)).toEqual([0, 2]);
    expect(l.cpGroup(1, 3, 1)).toEqual([13, 15]);
    expect(l.cpNext(0, 1, 0)).toBe(0);
    // The gradient group holds every replica's cp ranks: dp × cp ranks with the same weights.
    expect(l.dpGroup(0, 0)).toEqual([0, 2, 4, 6]);
  });

  it('inverts rank numbering with cp in both placements', () => {
    for (const placement of ['tp-dp-pp', 'tp-pp-dp'] as const) {
      const l = new ParallelLayout(2, 3, 2, placement, 2);
      const seen = new Set<number>();
      for (let r = 0; r < l.world; r++) {
        const c = l.coords(r);
        expect(l.rank(c.t, c.d, c.p)).toBe(r);
        seen.add(r);
      }
      expect(seen.size).toBe(24);
      // cp neighbours differ by tp in either placement.
      expect(l.cpGroup(1, 4, 1).map((r, i, g) => (i > 0 ? r - g[i - 1] : 2))).toEqual([2, 2]);
    }
  });
});

describe('ring attention', () => {
  it('gives each cp rank 1/cp of the attention FLOPs and of the tokens', () => {
    const shape = { microBatch: 1, seqLen: S, dtype: 'bf16' as const, tp: 1, sequenceParallel: false, flashAttention: true, recompute: 'none' as const };
    const flops = (cp: number, kind: 'attention' | 'gemm') =>
      buildBlocks(llama({}).model, { ...shape, cp })
        .filter((b) => b.layer === 0)
        .flatMap((b) => b.forward)
        .filter((o) => o.kind === kind)
        .reduce((a, o) => a + o.flops, 0);
    // Closed form: 4·b·s²·a·d forward attention FLOPs (the conventional full-matrix count).
    expect(flops(1, 'attention')).toBeCloseTo(4 * S * S * HEADS * (H / HEADS), -6);
    for (const cp of [2, 4]) {
      expect(flops(cp, 'attention')).toBeCloseTo(flops(1, 'attention') / cp, -6);
      expect(flops(cp, 'gemm')).toBeCloseTo(flops(1, 'gemm') / cp, -6);
    }
  });

  it('sends cp − 1 key/value blocks per forward and 2·(cp − 1) blocks per backward, each to the next rank', () => {
    for (const cp of [2, 4]) {
      const s = llama({ cp, dp: 8 / cp }, { layers: 2 });
      const plan = compileStep(s);
      const m = plan.microBatchesPerStep;
      const sends = plan.program.tasks.filter((t) => t.kind === 'cp-exchange');
      // Symmetric mode issues the simulated rank's sends (the others ride along as shadows): per layer and
      // micro-batch, cp − 1 in the forward and cp in the backward (the last one carries the finished gradients).
      expect(sends.length).toBe(2 * m * (2 * cp - 1));
      const block = 2 * (S / cp) * KV * (H / HEADS) * 2; // K and V of s/cp tokens, bf16
      const total = sends.reduce((a, t) => a + t.collective!.bytes, 0);
      expect(total).toBe(2 * m * 3 * (cp - 1) * block);
      expect(Math.min(...sends.map((t) => t.collective!.bytes))).toBe(block);
      for (const t of sends) {
        const [from, to] = t.collective!.group;
        expect(to).toBe(plan.layout.cpNext(0, plan.layout.coords(from).d, 0));
        // The shadows stand for the sends of every other rank of the node (its ring and the other replicas' rings).
        expect(t.collective!.shadowGroups?.length ?? 0).toBe(8 - 1);
      }
    }
  });

  it.each(['none', 'full'])('in full fidelity, makes a kernel wait for the block its predecessor in the ring sent (recompute %s)', (recompute) => {
    const plan = compileStep(scenarioOf({ ...llamaRaw({ cp: 2, dp: 4, recompute }), training: { globalBatch: 4, microBatch: 1, precision: 'bf16', flashAttention: true }, simulation: { fidelity: 'full' }, noise: { computeJitter: 0.1 } }));
    const tasks = plan.program.tasks;
    const waiting = tasks.filter((t) => t.kind !== 'cp-exchange' && t.deps.some((d) => tasks[d].kind === 'cp-exchange'));
    // Per rank (8), layer (4) and micro-batch (1): the forward's kernel 1 waits, the backward's kernel 1 and the op
    // after its last kernel wait, and a recomputed forward's kernel 1 waits too.
    expect(waiting.length).toBe(8 * 4 * (1 + 2 + (recompute === 'full' ? 1 : 0)));
    for (const t of waiting) {
      const received = t.deps.filter((d) => tasks[d].kind === 'cp-exchange' && tasks[d].collective!.group[1] === t.ranks[0]);
      expect(received.length).toBeGreaterThan(0);
    }
  });

  it('reduces gradients over dp × cp ranks and shards ZeRO state over them', () => {
    const plan = compileStep(llama({ cp: 2, dp: 4, zero: 1 }, { layers: 2 }));
    const reductions = plan.program.tasks.filter((t) => t.kind === 'dp-reducescatter' || t.kind === 'dp-allreduce');
    expect(reductions.length).toBeGreaterThan(0);
    for (const t of reductions) expect(t.collective!.group.length).toBe(8);
    const [withCp] = stageMemories(llama({ cp: 2, dp: 4, zero: 1 }));
    const [without] = stageMemories(llama({ cp: 1, dp: 8, zero: 1 }));
    expect(withCp.optimizerBytes).toBeCloseTo(without.optimizerBytes, 0);
  });

  it('halves a rank\'s activations at cp 2', () => {
    const [one] = stageMemories(llama({ cp: 1, dp: 8 }));
    const [two] = stageMemories(llama({ cp: 2, dp: 4 }));
    expect(two.activationsBytes).toBeCloseTo(one.activationsBytes / 2, 0);
  });

  it('runs one replica over two nodes about twice as fast as over one, and keeps its micro-batches', () => {
    const one = simulateStep(llama({ cp: 1, dp: 8 }, { globalBatch: 8 }));
    const two = simulateStep(llama({ cp: 2, dp: 8 }, { nodes: 2, globalBatch: 8 }));
    expect(two.result.microBatchesPerStep).toBe(one.result.microBatchesPerStep);
    const ratio = two.result.stepTimeS / one.result.stepTimeS;
    // Half the work per rank; the ring exchange overlaps attention, so it costs a few percent at most.
    expect(ratio).toBeGreaterThan(0.5);
    expect(ratio).toBeLessThan(0.6);
  });

  it('waits for a slow ring: with the keys and values over PCIe the step is slower than over NVLink', () => {
    const nvlink = simulateStep(llama({ cp: 8, dp: 1 }, { globalBatch: 2 }));
    const slow = simulateStep(scenarioOf({ ...llamaRaw({ cp: 8, dp: 1 }), cluster: { preset: 'pcie-8gpu' } }));
    expect(slow.result.breakdown.exposedCommS).toBeGreaterThan(nvlink.result.breakdown.exposedCommS);
  });
});

function llamaRaw(parallel: Record<string, unknown>) {
  return {
    cluster: { preset: 'dgx-h100' },
    model: { arch: 'llama', layers: 4, hidden: H, heads: HEADS, kvHeads: KV, ffnHidden: 14336, seqLen: S, vocab: 32000 },
    training: { globalBatch: 2, microBatch: 1, precision: 'fp16', flashAttention: true },
    parallel,
  };
}

describe('context-parallel checks', () => {
  it('counts cp in the split of the cluster', () => {
    expect(problems(() => llama({ cp: 2, dp: 8 }))).toEqual([expect.stringMatching(/^parallel\.dp: tp × cp × pp × dp = 1 × 2 × 1 × 8 = 16 exceeds the cluster's 8 GPUs/)]);
    expect(llama({ cp: 4 }).parallel.dp).toBe(2);
  });

  it('refuses a sequence that does not split into 2·cp chunks, unfused attention, and frameworks without it', () => {
    expect(problems(() => llama({ cp: 2 }, { training: { seqLen: 8190 } })).join('\n')).toMatch(/parallel\.cp: the sequence \(8190 tokens\) must split into 2 × cp = 4 equal chunks/);
    expect(problems(() => llama({ cp: 2 }, { training: { flashAttention: false } })).join('\n')).toMatch(/parallel\.cp: context parallelism runs on fused attention/);
    expect(problems(() => llama({ cp: 2, zero: 3 })).join('\n')).toMatch(/parallel\.cp: ZeRO-3/);
  });
});
