import { describe, expect, it } from 'vitest';
import { simulateStep } from '../../../src/sim/simulateStep.js';
import { compileStep } from '../../../src/sim/parallel/stepCompiler.js';
import { overlapTpSyncs, PIPELINE_RS_SPLITS } from '../../../src/sim/parallel/tpCommOverlap.js';
import { tpSyncPoints } from '../../../src/sim/parallel/tpSync.js';
import { opTimeNs } from '../../../src/sim/workload/kernelTime.js';
import { gemmOp } from '../../../src/sim/workload/ops.js';
import { H100_SXM5_80GB } from '../../../src/sim/hardware/gpus.js';
import { InvalidScenarioError } from '../../../src/scenario/errors.js';
import { scenarioOf } from '../../helpers/scenario.js';
import { summaryRows } from '../../../src/report/summary.js';

function llamaRaw() {
  return {
    cluster: { preset: 'dgx-h100', nodes: 1 },
    model: {
      arch: 'llama',
      layers: 4,
      hidden: 8192,
      heads: 64,
      kvHeads: 8,
      ffnHidden: 28672,
      seqLen: 8192,
      vocab: 32000,
    },
    training: { globalBatch: 4, microBatch: 1, precision: 'bf16', flashAttention: true },
    parallel: { tp: 8, sequenceParallel: true, tpCommOverlap: true },
  };
}

/** A Llama-style model, TP 8 with sequence parallelism on one H100 node. */
function llama(parallel: Record<string, unknown>) {
  return scenarioOf({
    cluster: { preset: 'dgx-h100', nodes: 1 },
    model: {
      arch: 'llama',
      layers: 4,
      hidden: 8192,
      heads: 64,
      kvHeads: 8,
      ffnHidden: 28672,
      seqLen: 8192,
      vocab: 32000,
    },
    training: { globalBatch: 4, microBatch: 1, precision: 'bf16', flashAttention: true },
    parallel: { tp: 8, sequenceParallel: true, ...parallel },
  });
}

describe('Transformer Engine TP communication overlap (--tp-comm-overlap)', () => {
  const ctx = {
    model: llama({}).model,
    tp: 8,
    sequenceParallel: true,
    style: 'megatron' as const,
    tokens: 8192,
    elementBytes: 2,
  };
  const forward = ['ln1', 'qkv', 'rope', 'attn.core', 'proj', 'ln2', 'fc1', 'act', 'fc2'];

  it(
    'lets the all-gathers run beside the GEMM that needs them, ' +
      'and the reduce-scatters beside the GEMM that makes them, but their last chunk',
    () => {
      const plain = tpSyncPoints(forward, ctx);
      const over = overlapTpSyncs(forward, plain);
      const at = (name: string) => forward.indexOf(name);
      const gathers = over.filter((s) => s.op === 'all_gather');
      // Before QKV and FC1: issued after the op before the GEMM, waited for after the GEMM.
      expect(gathers.map((s) => [s.afterOp, s.neededBy])).toEqual([
        [at('qkv') - 1, at('qkv') + 1],
        [at('fc1') - 1, at('fc1') + 1],
      ]);
      const full = 8192 * 8192 * 2;
      for (const gemm of ['proj', 'fc2']) {
        const rs = over.filter((s) => s.op === 'reduce_scatter' && s.neededBy === at(gemm) + 1);
        // The pipelined part runs beside the GEMM; the last of its chunks follows it. Together, the whole tensor.
        expect(rs.map((s) => [s.afterOp, s.bytes])).toEqual([
          [at(gemm) - 1, full * (1 - 1 / PIPELINE_RS_SPLITS)],
          [at(gemm), full / PIPELINE_RS_SPLITS],
        ]);
      }
      // Backward: the gradient's gather before the projection's and FC2's input-gradient GEMMs overlaps them too.
      const backward = [
        'fc2.dgrad',
        'fc2.wgrad',
        'act.bwd',
        'fc1.dgrad',
        'fc1.wgrad',
        'ln2.bwd',
        'proj.dgrad',
        'proj.wgrad',
      ];
      const bwd = overlapTpSyncs(backward, tpSyncPoints(backward, ctx)).filter((s) => s.label.includes('grad before'));
      expect(bwd.map((s) => [backward[s.afterOp + 1], backward[s.neededBy]])).toEqual([
        ['fc2.dgrad', 'fc2.wgrad'],
        ['proj.dgrad', 'proj.wgrad'],
      ]);
    },
  );

  it('hides most of the TP communication, and is faster when it takes no SMs from the GEMMs', () => {
    const off = simulateStep(llama({})).result;
    const on = simulateStep(llama({ tpCommOverlap: true, tpCommOverlapSms: { proj: 0, fc2: 0, bulk: 0 } })).result;
    const tpExposed = (r: typeof off) =>
      r.bottleneck.exposure.filter((e) => e.kind === 'tp-collective').reduce((a, e) => a + e.exposedS, 0);
    // What stays exposed: the last chunk of each pipelined reduce-scatter, and the LM
    // head's and embedding's collectives.
    expect(tpExposed(on)).toBeLessThan(0.5 * tpExposed(off));
    expect(on.stepTimeS).toBeLessThan(off.stepTimeS);
    // The same bytes move either way.
    const bytes = (p: Record<string, unknown>) =>
      compileStep(llama(p))
        .program.tasks.filter((t) => t.kind === 'tp-collective')
        .reduce((a, t) => a + t.collective!.bytes, 0);
    expect(bytes({ tpCommOverlap: true })).toBeCloseTo(bytes({}), 0);
  });

  it('slows a GEMM that leaves SMs to the communication as its waves on the SMs it keeps say', () => {
    const gpu = H100_SXM5_80GB;
    const op = gemmOp('proj', 8192, 8192, 8192, 1, 'bf16');
    const ratio =
      opTimeNs({ ...op, smMargin: 16 }, gpu, 'bf16', { launch: false }) / opTimeNs(op, gpu, 'bf16', { launch: false });
    // A GEMM of many waves: about the share of SMs it keeps, 132 / 116.
    expect(ratio).toBeCloseTo(132 / 116, 1);
    expect(ratio).toBeGreaterThan(1);
    const margins = simulateStep(llama({ tpCommOverlap: true })).result.stepTimeS;
    const none = simulateStep(llama({ tpCommOverlap: true, tpCommOverlapSms: { proj: 0, fc2: 0, bulk: 0 } })).result
      .stepTimeS;
    expect(margins).toBeGreaterThan(none);
  });

  it('needs sequence parallelism, as Megatron asserts, and SMs left to the GEMM', () => {
    const problems = (p: Record<string, unknown>) => {
      try {
        llama(p);
        return [];
      } catch (err) {
        return (err as InvalidScenarioError).problems.map((x) => `${x.path}: ${x.message}`);
      }
    };
    expect(problems({ tpCommOverlap: true, sequenceParallel: false })).toEqual([
      'parallel.tpCommOverlap: overlaps the all-gathers and reduce-scatters of sequence parallelism, ' +
        'as Megatron requires; set parallel.sequenceParallel: true (with tp > 1) or leave tpCommOverlap off',
    ]);
    expect(problems({ tpCommOverlap: true, tpCommOverlapSms: { proj: 132 } })).toEqual([
      "parallel.tpCommOverlapSms.proj: 132 SMs leave none of the h100-sxm5-80gb's 132 to the GEMM; use fewer",
    ]);
    // An MLP has no sequence-parallel collectives to overlap.
    expect(() =>
      scenarioOf({
        ...llamaRaw(),
        model: { preset: 'mlp-small' },
        parallel: { tp: 2, tpCommOverlap: true, sequenceParallel: true },
      }),
    ).toThrow(
      /parallel\.tpCommOverlap: overlaps a transformer layer's sequence-parallel collectives; an mlp model has none/,
    );
    // Megatron-DeepSpeed's layers have no Transformer Engine underneath.
    expect(() =>
      scenarioOf({
        ...llamaRaw(),
        model: { preset: 'gpt3-1.3b' },
        training: { globalBatch: 4, microBatch: 1, precision: 'bf16', framework: 'megatron-deepspeed' },
      }),
    ).toThrow(
      /parallel\.tpCommOverlap: is Transformer Engine's \(Megatron-LM, NeMo\); training\.framework megatron-deepspeed/,
    );
    // Userbuffers need the TP group inside one NVLink node.
    const pcie = () => scenarioOf({ ...llamaRaw(), cluster: { preset: 'pcie-8gpu' } });
    expect(() => pcie()).toThrow(
      new RegExp(
        /parallel\.tpCommOverlap: needs the TP group inside one NVLink node \(Transformer /.source +
          /Engine's userbuffers\), and tp 8 on pcie-8gpu \(8 GPUs per node, no NVLink\) is not/.source,
      ),
    );
  });

  it("says so in the result, its JSON and the report's parallelism row", () => {
    const r = simulateStep(llama({ tpCommOverlap: true, tpCommOverlapSms: { proj: 24, fc2: 16, bulk: 0 } })).result;
    expect(r.parallel).toMatchObject({ tpCommOverlap: true, tpCommOverlapSms: { proj: 24, fc2: 16, bulk: 0 } });
    expect(
      summaryRows({ name: 'x', modelName: 'm', clusterName: 'c', gpusPerNode: 8 }, r).find(
        ([k]) => k === 'parallelism',
      )?.[1],
    ).toBe('tp 8 × pp 1 × dp 1, sequence parallel (communication overlapped with GEMMs)');
    expect(simulateStep(llama({})).result.parallel.tpCommOverlap).toBeUndefined();
  });
});
