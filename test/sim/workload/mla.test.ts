import { describe, expect, it } from 'vitest';
import { modelPreset } from '../../../src/sim/workload/modelPresets.js';
import { buildBlocks } from '../../../src/sim/workload/transformerOps.js';
import { headDim, parameterTensors } from '../../../src/sim/workload/model.js';
import { scenarioOf } from '../../helpers/scenario.js';
import { tpSyncPoints } from '../../../src/sim/parallel/tpSync.js';
import { compileStep } from '../../../src/sim/parallel/stepCompiler.js';
import { simulateStep } from '../../../src/sim/simulateStep.js';

const V3 = modelPreset('deepseek-v3');
const shape = {
  microBatch: 1,
  seqLen: 4096,
  dtype: 'bf16' as const,
  tp: 1,
  sequenceParallel: false,
  flashAttention: true,
  recompute: 'none' as const,
};

describe('multi-head latent attention (DeepSeek-V3)', () => {
  it('registers the down- and up-projections with their published shapes: 187M weights a layer', () => {
    const layer = parameterTensors(V3).filter((t) => t.layer === 0 && t.name.includes('self_attn'));
    const size = (n: string) => layer.find((t) => t.name.endsWith(n))!.elements;
    expect(size('q_a_proj.weight')).toBe(7168 * 1536);
    expect(size('q_b_proj.weight')).toBe(1536 * 128 * 192);
    expect(size('kv_a_proj_with_mqa.weight')).toBe(7168 * (512 + 64));
    expect(size('kv_b_proj.weight')).toBe(512 * 128 * (128 + 128));
    expect(size('o_proj.weight')).toBe(128 * 128 * 7168);
    expect(layer.reduce((a, t) => a + t.elements, 0)).toBe(187_107_328);
  });

  it('charges the attention core 2·s²·(d_qk + d_v) FLOPs a head forward, as a kernel of width 160', () => {
    expect(headDim(V3)).toBe(160);
    const layer = buildBlocks(V3, shape).find((b) => b.name === 'layer.0')!;
    const core = layer.forward.find((op) => op.name === 'attn.core')!;
    expect(core.flops).toBe(2 * 4096 * 4096 * 128 * (192 + 128));
    // The projections: 2·T·(each weight's elements) forward (the two latent norms, 1536 + 512 weights, are no GEMM).
    const proj = ['q_down', 'q_up', 'kv_down', 'kv_up', 'proj'].map((n) => layer.forward.find((op) => op.name === n)!);
    expect(proj.reduce((a, op) => a + op.flops, 0)).toBe(2 * 4096 * (187_107_328 - 1536 - 512));
  });

  it('splits over tensor parallelism as Megatron-Core does: whole down-projections on each rank’s tokens', () => {
    const tp2 = { ...shape, tp: 2, sequenceParallel: true };
    const layer = buildBlocks(V3, tp2).find((b) => b.name === 'layer.0')!;
    const flops = (n: string) => layer.forward.find((op) => op.name === n)!.flops;
    // Down-projections whole, on the rank's 2048 of 4096 tokens; up-projections over its
    // 64 of 128 heads, on all tokens.
    expect(flops('q_down')).toBe(2 * 2048 * 7168 * 1536);
    expect(flops('kv_down')).toBe(2 * 2048 * 7168 * 576);
    expect(flops('q_up')).toBe(2 * 4096 * 1536 * 64 * 192);
    expect(flops('kv_up')).toBe(2 * 4096 * 512 * 64 * 256);
    const ctx = { model: V3, tp: 2, sequenceParallel: true, style: 'megatron' as const, tokens: 4096, elementBytes: 2 };
    const syncs = tpSyncPoints(
      layer.forward.map((op) => op.name),
      ctx,
    );
    const gather = (n: string) => syncs.find((s) => s.label === `TP all-gather before ${n}`)!;
    // Each up-projection gathers its latent over the TP group first: 4096 tokens × width × 2 bytes.
    expect(gather('q_up').bytes).toBe(4096 * 1536 * 2);
    expect(gather('kv_up').bytes).toBe(4096 * 576 * 2);
    expect(syncs.some((s) => s.label.includes('before qkv'))).toBe(false);
    const back = tpSyncPoints(
      layer.backward.map((op) => op.name),
      ctx,
    );
    const scatter = back.find((s) => s.label === 'TP reduce-scatter q_up.dgrad')!;
    expect(scatter.bytes).toBe(4096 * 1536 * 2);
    expect(scatter.neededBy).toBe(scatter.afterOp + 2); // hidden behind the weight-gradient GEMM
    const noSp = tpSyncPoints(
      layer.backward.map((op) => op.name),
      { ...ctx, sequenceParallel: false },
    );
    expect(noSp.find((s) => s.label === 'TP all-reduce kv_up.dgrad')!.bytes).toBe(4096 * 576 * 2);
  });

  it('runs a step at tp 2: the latents gathered over the TP group, the down-projections computed twice over', () => {
    const at = (parallel: Record<string, unknown>) =>
      scenarioOf({
        name: 'v3 tp',
        cluster: { preset: 'hgx-h800', nodes: 2 },
        model: { preset: 'deepseek-v3', layers: 4, moe: { denseLayers: 1 }, mtpLayers: 0 },
        training: { globalBatch: 16, seqLen: 4096 },
        parallel: { zero: 1, recompute: 'full', ...parallel },
      });
    const tp2 = at({ tp: 2, sequenceParallel: true, ep: 8 });
    const labels = compileStep(tp2).program.tasks.map((t) => t.label);
    expect(labels).toContain('TP all-gather before q_up');
    expect(labels).toContain('TP all-gather before kv_up');
    const one = simulateStep(at({ ep: 16 })).result.breakdown.computeS;
    const two = simulateStep(tp2).result.breakdown.computeS;
    // Each of 2 ranks does half of the split work and all of its own tokens' down-projections: more than tp 1's half.
    expect(two).toBeGreaterThan(one / 2);
  });

  it('is refused with context parallelism, which is not modelled for it', () => {
    const refused = (parallel: Record<string, unknown>) => {
      try {
        scenarioOf({
          name: 'v3',
          cluster: { preset: 'hgx-h800', nodes: 2 },
          model: { preset: 'deepseek-v3', layers: 4, moe: { denseLayers: 1 }, mtpLayers: 0 },
          training: { globalBatch: 16, seqLen: 4096 },
          parallel,
        });
      } catch (err) {
        return (err as Error).message;
      }
      return 'accepted';
    };
    expect(refused({ ep: 8 })).toBe('accepted');
    expect(refused({ tp: 2, sequenceParallel: true })).toBe('accepted');
    expect(refused({ cp: 2 })).toMatch(/parallel\.cp: 2: latent attention/);
  });
});
