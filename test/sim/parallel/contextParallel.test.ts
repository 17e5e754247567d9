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
function llama(
  parallel: Record<string, unknown>,
  opts: { nodes?: number; globalBatch?: number; layers?: number; training?: Record<string, unknown> } = {},
) {
  return scenarioOf({
    cluster: { preset: 'dgx-h100', nodes: opts.nodes ?? 1 },
    model: {
      arch: 'llama',
      layers: opts.layers ?? 4,
      hidden: H,
      heads: HEADS,
      kvHeads: KV,
      ffnHidden: 14336,
      seqLen: S,
      vocab: 32000,
    },
    training: {
      globalBatch: opts.globalBatch ?? 8,
      microBatch: 1,
      precision: 'bf16',
      flashAttention: true,
      ...opts.training,
    },
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
    const shape = {
      microBatch: 1,
      seqLen: S,
      dtype: 'bf16' as const,
      tp: 1,
      sequenceParallel: false,
      flashAttention: true,
      recompute: 'none' as const,
    };
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

  it.each(['none', 'full'])(
    'in full fidelity, makes a kernel wait for the block its predecessor in the ring sent (recompute %s)',
    (recompute) => {
      const plan = compileStep(
        scenarioOf({
          ...llamaRaw({ cp: 2, dp: 4, recompute }),
          training: { globalBatch: 4, microBatch: 1, precision: 'bf16', flashAttention: true },
          simulation: { fidelity: 'full' },
          noise: { computeJitter: 0.1 },
        }),
      );
      const tasks = plan.program.tasks;
      const waiting = tasks.filter(
        (t) => t.kind !== 'cp-exchange' && t.deps.some((d) => tasks[d].kind === 'cp-exchange'),
      );
      // Per rank (8), layer (4) and micro-batch (1): the forward's kernel 1 waits, the backward's kernel 1 and the op
      // after its last kernel wait, and a recomputed forward's kernel 1 waits too.
      expect(waiting.length).toBe(8 * 4 * (1 + 2 + (recompute === 'full' ? 1 : 0)));
      for (const t of waiting) {
        const received = t.deps.filter(
          (d) => tasks[d].kind === 'cp-exchange' && tasks[d].collective!.group[1] === t.ranks[0],
        );
        expect(received.length).toBeGreaterThan(0);
      }
    },
  );

  it('reduces gradients over dp × cp ranks and shards ZeRO state over them', () => {
    const plan = compileStep(llama({ cp: 2, dp: 4, zero: 1 }, { layers: 2 }));
    const reductions = plan.program.tasks.filter((t) => t.kind === 'dp-reducescatter' || t.kind === 'dp-allreduce');
    expect(reductions.length).toBeGreaterThan(0);
    for (const t of reductions) expect(t.collective!.group.length).toBe(8);
    const [withCp] = stageMemories(llama({ cp: 2, dp: 4, zero: 1 }));
    const [without] = stageMemories(llama({ cp: 1, dp: 8, zero: 1 }));
    expect(withCp.optimizerBytes).toBeCloseTo(without.optimizerBytes, 0);
  });

  it("halves a rank's activations at cp 2", () => {
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

  it.each(['p2p', 'all_gather'])(
    'paces a ring that leaves the node by its hop over the network in symmetric mode, as full fidelity does (%s)',
    (cpCommType) => {
      // cp 16 over two nodes: 14 hops over NVLink and 2 over InfiniBand. Every rank waits for its predecessor, so the
      // ring runs at the network hop's pace; the one simulated rank must wait for that hop, not its own NVLink one.
      const run = (fidelity: string) =>
        simulateStep(
          scenarioOf({
            ...llamaRaw({ cp: 16, dp: 1, cpCommType }),
            cluster: { preset: 'dgx-h100', nodes: 2 },
            training: { globalBatch: 4, microBatch: 1, precision: 'bf16', flashAttention: true },
            simulation: { fidelity },
          }),
        ).result.stepTimeS;
      expect(run('symmetric') / run('full')).toBeCloseTo(1, 2);
    },
  );

  it('waits for a slow ring: with the keys and values over PCIe the step is slower than over NVLink', () => {
    const nvlink = simulateStep(llama({ cp: 8, dp: 1 }, { globalBatch: 2 }));
    const slow = simulateStep(scenarioOf({ ...llamaRaw({ cp: 8, dp: 1 }), cluster: { preset: 'pcie-8gpu' } }));
    expect(slow.result.breakdown.exposedCommS).toBeGreaterThan(nvlink.result.breakdown.exposedCommS);
  });
});

function llamaRaw(parallel: Record<string, unknown>) {
  return {
    cluster: { preset: 'dgx-h100' },
    model: {
      arch: 'llama',
      layers: 4,
      hidden: H,
      heads: HEADS,
      kvHeads: KV,
      ffnHidden: 14336,
      seqLen: S,
      vocab: 32000,
    },
    training: { globalBatch: 2, microBatch: 1, precision: 'fp16', flashAttention: true },
    parallel,
  };
}

describe('context-parallel checks', () => {
  it('counts cp in the split of the cluster', () => {
    expect(problems(() => llama({ cp: 2, dp: 8 }))).toEqual([
      expect.stringMatching(/^parallel\.dp: tp × cp × pp × dp = 1 × 2 × 1 × 8 = 16 exceeds the cluster's 8 GPUs/),
    ]);
    expect(llama({ cp: 4 }).parallel.dp).toBe(2);
  });

  it('refuses a sequence that does not split into 2·cp chunks, unfused attention, and frameworks without it', () => {
    expect(problems(() => llama({ cp: 2 }, { training: { seqLen: 8190 } })).join('\n')).toMatch(
      /parallel\.cp: the sequence \(8190 tokens\) must split into 2 × cp = 4 equal chunks/,
    );
    expect(problems(() => llama({ cp: 2 }, { training: { flashAttention: false } })).join('\n')).toMatch(
      /parallel\.cp: context parallelism runs on fused attention/,
    );
    expect(problems(() => llama({ cp: 2, zero: 3 })).join('\n')).toMatch(/parallel\.cp: ZeRO-3/);
  });
});

describe('context parallelism by all-gather and by all-to-all (--cp-comm-type)', () => {
  const D = H / HEADS;
  const shape = {
    microBatch: 1,
    seqLen: S,
    dtype: 'bf16' as const,
    tp: 1,
    sequenceParallel: false,
    flashAttention: true,
    recompute: 'none' as const,
  };
  const attention = (cp: number, cpCommType: 'p2p' | 'all_gather' | 'a2a', tp = 1) =>
    buildBlocks(llama({}).model, { ...shape, tp, cp, cpCommType })
      .filter((b) => b.layer === 0)
      .flatMap((b) => b.forward)
      .filter((o) => o.kind === 'attention');
  const exchanges = (cpCommType: string, cp: number, recompute = 'none') => {
    const plan = compileStep(llama({ cp, dp: 8 / cp, cpCommType, recompute }, { layers: 2 }));
    return { m: plan.microBatchesPerStep, sends: plan.program.tasks.filter((t) => t.kind === 'cp-exchange'), plan };
  };
  // Closed forms, bf16: a rank's keys and values (2U), and its queries (as many bytes as its attention output).
  const kv = (cp: number) => 2 * (S / cp) * KV * D * 2;
  const q = (cp: number) => (S / cp) * HEADS * D * 2;

  it("does the same attention work per rank in every type: 1/cp of the whole sequence's", () => {
    for (const cp of [2, 4]) {
      const whole = attention(1, 'p2p').reduce((a, o) => a + o.flops, 0);
      for (const type of ['p2p', 'all_gather', 'a2a'] as const)
        expect(attention(cp, type).reduce((a, o) => a + o.flops, 0)).toBeCloseTo(whole / cp, -6);
      // all_gather: two calls (one per chunk the rank holds), each over s/(2·cp) query rows; a2a: one call over the
      // whole sequence for 1/cp of the heads.
      const gathered = attention(cp, 'all_gather');
      expect(gathered.map((o) => [o.name, o.attention!.queryLen])).toEqual([
        ['attn.core.cp0', S / (2 * cp)],
        ['attn.core.cp1', S / (2 * cp)],
      ]);
      const [a2a] = attention(cp, 'a2a');
      expect([
        attention(cp, 'a2a').length,
        a2a.attention!.seqLen,
        a2a.attention!.queryLen,
        a2a.attention!.batchHeads,
      ]).toEqual([1, S, undefined, HEADS / cp]);
    }
  });

  it(
    'all-gathers the keys and values before each forward and backward, ' + 'and reduce-scatters their gradients after',
    () => {
      for (const cp of [2, 4]) {
        for (const recompute of ['none', 'full']) {
          const { m, sends, plan } = exchanges('all_gather', cp, recompute);
          // Collectives over the cp group on the whole sequence's keys and values (cp blocks of 2U), the gather before
          // and the reduce-scatter after. Per layer (2) and micro-batch: forward 1 (+1 recomputed), backward 2.
          const perLayer = recompute === 'full' ? 4 : 3;
          expect(sends.length).toBe(2 * m * perLayer);
          for (const t of sends) {
            expect(t.collective!.bytes).toBe(cp * kv(cp));
            expect([...t.collective!.group]).toEqual([...plan.layout.cpGroup(0, 0, 0)]);
          }
          expect(
            sends
              .filter((t) => t.collective!.op === 'reduce_scatter')
              .map((t) => t.label.startsWith('CP reduce-scatter')),
          ).toEqual(Array(2 * m).fill(true));
        }
      }
    },
  );

  it(
    'exchanges queries, keys and values all-to-all before ' + 'attention and the output after, and back in backward',
    () => {
      const cp = 4;
      const { m, sends } = exchanges('a2a', cp);
      // An all-to-all sends (cp − 1)/cp of the rank's tensor to the other ranks: an all-gather into the tensor's bytes.
      const share = (bytes: number) => bytes;
      for (const t of sends) expect(t.collective!.op).toBe('all_gather');
      const byLabel = (l: string) => sends.filter((t) => t.label.startsWith(`${l} mb`)).map((t) => t.collective!.bytes);
      expect(byLabel('CP all-to-all queries/keys/values')).toEqual(Array(2 * m).fill(share(q(cp) + kv(cp))));
      expect(byLabel('CP all-to-all output')).toEqual(Array(2 * m).fill(share(q(cp))));
      expect(byLabel('CP all-to-all output gradient')).toEqual(Array(2 * m).fill(share(q(cp))));
      expect(byLabel('CP all-to-all query/key/value gradients')).toEqual(Array(2 * m).fill(share(q(cp) + kv(cp))));
      expect(sends.length).toBe(4 * 2 * m);
    },
  );

  it('blocks on the gathers and all-to-alls (the next op waits), so they expose more than the overlapped ring', () => {
    const exposed = (cp: number, cpCommType: string) =>
      simulateStep(llama({ cp, dp: 8 / cp, cpCommType }, { globalBatch: 8 / cp })).result.breakdown.exposedCommS;
    for (const cp of [2, 8]) {
      expect(exposed(cp, 'all_gather')).toBeGreaterThan(exposed(cp, 'p2p'));
      expect(exposed(cp, 'a2a')).toBeGreaterThan(exposed(cp, 'p2p'));
    }
    // With 4 query heads per key/value head (queries: 2 blocks of 2U), per layer an all-gather moves 3·(cp − 1) blocks
    // of 2U and an all-to-all 10·(cp − 1)/cp: 3 against 5 at cp 2, 21 against 8.75 at cp 8.
    expect(exposed(2, 'a2a')).toBeGreaterThan(exposed(2, 'all_gather'));
    expect(exposed(8, 'a2a')).toBeLessThan(exposed(8, 'all_gather'));
    const { plan } = exchanges('all_gather', 2);
    const tasks = plan.program.tasks;
    // Every exchange is waited for by the compute that follows it on the same rank.
    for (const t of tasks.filter((x) => x.kind === 'cp-exchange')) {
      expect(
        tasks.some((u) => u.kind !== 'cp-exchange' && u.deps.includes(t.id) && u.ranks[0] === t.collective!.group[0]),
      ).toBe(true);
    }
  });

  it(
    'in full fidelity, makes the op after a gather wait for ' +
      "every member's share of it, not only its ring predecessor's",
    () => {
      const plan = compileStep(
        scenarioOf({
          ...llamaRaw({ cp: 4, dp: 2, cpCommType: 'all_gather' }),
          training: { globalBatch: 2, microBatch: 1, precision: 'bf16', flashAttention: true },
          simulation: { fidelity: 'full' },
          noise: { computeJitter: 0.1 },
        }),
      );
      const tasks = plan.program.tasks;
      const gathers = new Set(tasks.filter((t) => t.label.startsWith('CP all-gather keys/values')).map((t) => t.id));
      const waiting = tasks.filter((t) => t.kind !== 'cp-exchange' && t.deps.some((d) => gathers.has(d)));
      expect(waiting.length).toBeGreaterThan(0);
      // Each waits for the shares of all 4 members of its group.
      for (const t of waiting) expect(t.deps.filter((d) => gathers.has(d)).length).toBe(4);
    },
  );

  it(
    'runs the gathers as collectives over the cp group, ' + 'on every NIC of the nodes it spans, not one send per rank',
    () => {
      // cp 16 over two nodes: a ring all-gather of NCCL crosses between the nodes on all 8 NICs at once.
      const run = simulateStep(
        scenarioOf({
          ...llamaRaw({ cp: 16, dp: 1, cpCommType: 'all_gather' }),
          cluster: { preset: 'dgx-h100', nodes: 2 },
          training: { globalBatch: 1, microBatch: 1, precision: 'bf16', flashAttention: true },
        }),
      );
      const { program, startNs, endNs } = run.trace;
      const gathers = program.tasks.filter((t) => t.label.startsWith('CP all-gather keys/values'));
      expect(gathers.length).toBeGreaterThan(0);
      for (const t of gathers) expect(t.collective!.group.length).toBe(16);
      const fastest = Math.min(...gathers.map((t) => endNs[t.id] - startNs[t.id]));
      // Bytes each rank receives, over what one NIC (400 Gb/s) could carry: a floor that
      // only a single-NIC send reaches.
      const perRank = (gathers[0].collective!.bytes * 15) / 16;
      const oneNicNs = perRank / 50;
      expect(fastest).toBeLessThan(oneNicNs / 2);
    },
  );

  it('refuses a2a when the heads of a TP rank do not split over cp, and says which cp would', () => {
    // 32 query and 8 key/value heads: tp 4 leaves 8 and 2 per TP rank, which cp 2 splits.
    expect(problems(() => scenarioOf({ ...llamaRaw({ tp: 4, cp: 2, dp: 1, cpCommType: 'a2a' }) }))).toEqual([]);
    const two = { preset: 'dgx-h100', nodes: 2 };
    const none = problems(() =>
      scenarioOf({ ...llamaRaw({ tp: 8, cp: 2, dp: 1, cpCommType: 'a2a' }), cluster: two }),
    ).join('\n');
    expect(none).toBe(
      "parallel.cpCommType: a2a splits each TP rank's heads over the cp ranks, but 4 query head(s) and 1 " +
        'key/value head(s) per TP rank do not divide by cp 2; use cpCommType p2p or all_gather, or a smaller tp',
    );
    const some = problems(() =>
      scenarioOf({ ...llamaRaw({ tp: 2, cp: 8, dp: 1, cpCommType: 'a2a' }), cluster: two }),
    ).join('\n');
    expect(some).toContain(
      '16 query head(s) and 4 key/value head(s) per TP rank do not divide by cp 8; use cp 2 or 4, use cpCommType p2p',
    );
    expect(
      problems(() => scenarioOf({ ...llamaRaw({ tp: 2, cp: 8, dp: 1, cpCommType: 'all_gather' }), cluster: two })),
    ).toEqual([]);
    expect(problems(() => scenarioOf({ ...llamaRaw({ cp: 2, dp: 4, cpCommType: 'ring' }) }))).toEqual([
      "parallel.cpCommType: expected one of 'p2p', 'all_gather', 'a2a', got 'ring'",
    ]);
  });

  it(
    "counts each type's attention buffers in memory: " +
      'all-gather the gathered sequence, the ring its received blocks',
    () => {
      const buffers = (cp: number, cpCommType: string) =>
        stageMemories(llama({ cp, dp: 8 / cp, cpCommType }))[0].buffersBytes;
      const none = stageMemories(llama({ cp: 1, dp: 8 }))[0].buffersBytes;
      for (const cp of [2, 8]) {
        // all_gather: the gathered keys/values and, in backward, their full-length gradients: 2·cp blocks of 2U.
        expect(buffers(cp, 'all_gather') - none).toBe(2 * cp * kv(cp));
        // p2p: the forward keeps the cp blocks it received; the backward two buffers of keys/values and gradients.
        expect(buffers(cp, 'p2p') - none).toBe(Math.max(cp, 4) * kv(cp));
        // a2a: one more copy of the rank's queries, keys and values.
        expect(buffers(cp, 'a2a') - none).toBe(q(cp) + kv(cp));
      }
    },
  );

  it('names the type in the result and leaves it out without context parallelism', () => {
    expect(simulateStep(llama({ cp: 2, dp: 4, cpCommType: 'a2a' }, { layers: 1 })).result.parallel.cpCommType).toBe(
      'a2a',
    );
    expect(
      simulateStep(llama({ cp: 1, dp: 8, cpCommType: 'a2a' }, { layers: 1 })).result.parallel.cpCommType,
    ).toBeUndefined();
  });
});
