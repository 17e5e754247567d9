import { describe, expect, it } from 'vitest';
import { modelPreset } from '../../../src/sim/workload/modelPresets.js';
import { buildBlocks } from '../../../src/sim/workload/transformerOps.js';
import { headDim, parameterTensors } from '../../../src/sim/workload/model.js';
import { scenarioOf } from '../../helpers/scenario.js';

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

  it('is refused with tensor or context parallelism, which are not modelled for it', () => {
    const refused = (parallel: Record<string, unknown>) => {
      try {
        scenarioOf({
          name: 'v3',
          cluster: { preset: 'hgx-h800', nodes: 2 },
          model: { preset: 'deepseek-v3', layers: 4, moe: { denseLayers: 1 } },
          training: { globalBatch: 16, seqLen: 4096 },
          parallel,
        });
      } catch (err) {
        return (err as Error).message;
      }
      return 'accepted';
    };
    expect(refused({ ep: 8 })).toBe('accepted');
    expect(refused({ tp: 2, sequenceParallel: true })).toMatch(
      /parallel\.tp: 2: latent attention \(model\.mla\) is modelled at tp 1 only/,
    );
    expect(refused({ cp: 2 })).toMatch(/parallel\.cp: 2: latent attention/);
  });
});
