import { describe, expect, it } from 'vitest';
import { compileStep } from '../../../src/sim/parallel/stepCompiler.js';
import { stageMemories } from '../../../src/sim/memory/stageMemory.js';
import { simulateStep } from '../../../src/sim/simulateStep.js';
import { modelFlopsPerStep } from '../../../src/sim/workload/flops.js';
import { activeParameterCount } from '../../../src/sim/workload/model.js';
import { scenarioOf } from '../../helpers/scenario.js';

/** A small model with experts: 4 layers, width 1024, 8 experts of 2048, top 2. */
const SMALL_MOE = {
  arch: 'llama',
  layers: 4,
  hidden: 1024,
  heads: 8,
  kvHeads: 8,
  ffnHidden: 4096,
  seqLen: 2048,
  vocab: 32000,
  moe: { experts: 8, topK: 2, expertFfnHidden: 2048 },
};

function moeScenario(parallel: Record<string, unknown>, nodes = 1, model: Record<string, unknown> = SMALL_MOE) {
  return scenarioOf({
    name: 'moe',
    cluster: { preset: 'dgx-h100', nodes },
    model,
    training: { globalBatch: 16, microBatch: 1, seqLen: 2048 },
    parallel,
  });
}

const allToAlls = (s: ReturnType<typeof moeScenario>) =>
  compileStep(s).program.tasks.filter((t) => t.kind === 'ep-alltoall');

describe('expert parallelism', () => {
  it('runs four all-to-alls a layer and micro-batch, each moving k·T·h·e bytes a rank over its ep group', () => {
    const s = moeScenario({ ep: 8 });
    const tasks = allToAlls(s);
    const microBatches = 16 / 8;
    // Dispatch and combine forward, their gradients backward; symmetric mode simulates one replica.
    expect(tasks).toHaveLength(4 * 4 * microBatches);
    for (const t of tasks) {
      expect(t.collective!.op).toBe('all_to_all');
      expect(t.collective!.bytes).toBe(2 * 2048 * 1024 * 2);
      expect([...t.collective!.group]).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    }
  });

  it('needs no all-to-all when every rank holds every expert', () => {
    expect(allToAlls(moeScenario({ ep: 1 }))).toHaveLength(0);
  });

  it('forms each expert-parallel group from the data-parallel ranks of one TP rank', () => {
    const s = moeScenario({ tp: 2, ep: 4, sequenceParallel: true });
    const groups = new Set(allToAlls(s).map((t) => [...t.collective!.group].join(',')));
    expect([...groups]).toEqual(['0,2,4,6']);
    // With sequence parallelism each TP rank routes T/t tokens.
    expect(allToAlls(s)[0].collective!.bytes).toBe((2048 / 2) * 2 * 1024 * 2);
  });

  it('splits the expert weights, their gradients and optimizer state as Megatron-Core folds them', () => {
    const expertParams = 4 * 8 * 3 * 1024 * 2048;
    const ep1 = stageMemories(moeScenario({ ep: 1, zero: 1 }))[0];
    const ep8 = stageMemories(moeScenario({ ep: 8, zero: 1 }))[0];
    // Each of 8 ranks keeps 1/8 of the experts.
    expect(ep1.paramsPerRank - ep8.paramsPerRank).toBe((expertParams * 7) / 8);
    // ZeRO-1 shards the dense states over dp 8 and the experts' over dp / ep = 1: the experts' fp32 state (12 bytes a
    // parameter) is the same per GPU either way, 12 · P_expert / 8.
    const denseParams = ep1.paramsPerRank - expertParams;
    expect(ep8.optimizerBytes).toBeCloseTo((12 * denseParams) / 8 + (12 * expertParams) / 8, -2);
    expect(ep1.optimizerBytes).toBeCloseTo((12 * (denseParams + expertParams)) / 8, -2);
    expect(ep8.weightsBytes).toBeCloseTo(2 * (denseParams + expertParams / 8), -2);
  });

  it('counts the active parameters in the model FLOPs: 6 · active · tokens plus attention', () => {
    const s = moeScenario({ ep: 8 });
    const tokens = 16 * 2048;
    const flops = modelFlopsPerStep(s.model, 16, 2048);
    // Attention scores and values, causal not discounted: 12 · layers · s · h per token (Korthikanti et al. 2022).
    const attention = 12 * 4 * 2048 * 1024 * tokens;
    // The input embedding is a lookup, no GEMM.
    const dense = 6 * (activeParameterCount(s.model) - 32000 * 1024) * tokens;
    // The router, permutes and norms add the rest: within 2% of the closed form.
    expect(flops / (dense + attention)).toBeGreaterThan(0.99);
    expect(flops / (dense + attention)).toBeLessThan(1.02);
  });

  it('is slower across nodes than inside one, the all-to-alls crossing the NICs', () => {
    // tp 1: the group of 8 is one node's GPUs; tp 2: it takes every other GPU of two nodes (half the bytes a rank).
    const inside = simulateStep(moeScenario({ ep: 8 }, 2)).result;
    const across = simulateStep(moeScenario({ ep: 8, tp: 2, sequenceParallel: true }, 2)).result;
    const exposedA2a = (r: typeof inside) =>
      r.bottleneck.exposure.filter((e) => e.kind === 'ep-alltoall').reduce((a, e) => a + e.exposedS, 0);
    expect(exposedA2a(across)).toBeGreaterThan(exposedA2a(inside));
    expect(across.notes.some((n) => n.includes('spans 2 nodes'))).toBe(true);
    expect(inside.notes.some((n) => n.includes('lies inside one node'))).toBe(true);
  });
});

describe('CPU offload of a model with experts', () => {
  it('keeps on the host each rank’s shard of the dense state over dp and of the experts’ over their own ranks', () => {
    const expertParams = 4 * 8 * 3 * 1024 * 2048;
    const m = stageMemories(moeScenario({ ep: 8, zero: 1, offload: 'cpu' }))[0];
    const dense = m.paramsPerRank - expertParams / 8;
    // fp32 master, momentum, variance (12) + fp32 gradient (4) + the 16-bit weights copied back (2) + the 16-bit
    // gradient accumulation over the 2 micro-batches (2): 20 bytes a parameter of the shard.
    expect(m.hostBytes).toBeCloseTo(20 * (dense / 8 + expertParams / 8), -3);
  });
});

describe('scenarios with experts that the simulator refuses', () => {
  const refused = (parallel: Record<string, unknown>, model: Record<string, unknown> = SMALL_MOE) => {
    try {
      moeScenario(parallel, 1, model);
    } catch (err) {
      return (err as Error).message;
    }
    return 'accepted';
  };
  it('names each problem: ep not dividing the experts or dp, tp without sequence parallelism, ZeRO-3', () => {
    expect(refused({ ep: 3 })).toMatch(/parallel\.ep: 3 does not divide the 8 experts/);
    expect(refused({ tp: 2, ep: 8 })).toMatch(/does not divide dp × cp = 4/);
    expect(refused({ tp: 2 })).toMatch(/sequenceParallel: Megatron-Core needs sequence parallelism/);
    expect(refused({ zero: 3 })).toMatch(/ZeRO-3 \/ FSDP of a model with experts is not modelled/);
    expect(refused({ ep: 2 }, { ...SMALL_MOE, moe: undefined })).toMatch(
      /expert parallelism needs a model with experts/,
    );
  });
});

describe('expert tensor parallelism of its own (MoE parallel folding)', () => {
  it('folds the expert-parallel group over the stage’s tp × dp ranks, tp fastest, with etp 1', () => {
    const s = moeScenario({ tp: 2, ep: 8, etp: 1, sequenceParallel: true }, 2);
    const groups = new Set(allToAlls(s).map((t) => [...t.collective!.group].join(',')));
    // Expert grid places 0..7 of the 16 ranks: TP ranks 0 and 1 of replicas 0..3.
    expect([...groups]).toEqual(['0,1,2,3,4,5,6,7']);
    // No expert TP gather: each rank computes whole experts on the tokens it received.
    const gathers = compileStep(s).program.tasks.filter((t) => t.label.startsWith('TP all-gather dispatched'));
    expect(gathers).toHaveLength(0);
  });

  it('keeps whole experts on each rank and shards their state over tp × dp / (etp × ep)', () => {
    const expertParams = 4 * 8 * 3 * 1024 * 2048;
    const folded = stageMemories(moeScenario({ tp: 2, ep: 8, etp: 1, sequenceParallel: true, zero: 1 }, 2))[0];
    const kept = stageMemories(moeScenario({ tp: 2, ep: 8, sequenceParallel: true, zero: 1 }, 2))[0];
    // etp 1: an eighth of the experts, whole; etp = tp = 2: an eighth, halved.
    expect(folded.paramsPerRank - kept.paramsPerRank).toBe(expertParams / 8 - expertParams / 16);
    // Expert data parallelism: 16 / (1 × 8) = 2 ranks share each expert's optimizer state, against 16 / (2 × 8) = 1.
    const denseParams = kept.paramsPerRank - expertParams / 16;
    expect(folded.optimizerBytes).toBeCloseTo((12 * denseParams) / 8 + (12 * expertParams) / 8 / 2, -2);
    expect(kept.optimizerBytes).toBeCloseTo((12 * denseParams) / 8 + (12 * expertParams) / 16, -2);
  });
});

describe("Megatron's overlapped weight gather with experts", () => {
  it('gathers the expert buckets at the start of the step too, over their own ranks, and none at its end', () => {
    const s = moeScenario({ ep: 2, zero: 1, overlapParamGather: true });
    const tasks = compileStep(s).program.tasks.filter((t) => t.kind === 'dp-allgather');
    expect(tasks.some((t) => t.label === 'all-gather updated expert weights')).toBe(false);
    // Expert buckets gather over the expert-data-parallel group (every 2nd rank of 8), dense ones over all 8.
    const groups = new Set(tasks.map((t) => t.collective!.group.length));
    expect([...groups].sort()).toEqual([4, 8]);
  });
});
