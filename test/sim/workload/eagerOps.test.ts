import { describe, expect, it } from 'vitest';
import { activationBytesPerLayer } from '../../../src/sim/memory/activations.js';
import { simulateStep } from '../../../src/sim/simulateStep.js';
import { eagerRmsNorm, eagerRotary, eagerSwiglu } from '../../../src/sim/workload/eagerOps.js';
import { layerContext } from '../../../src/sim/workload/layerContext.js';
import { modelPreset } from '../../../src/sim/workload/modelPresets.js';
import type { Op } from '../../../src/sim/workload/ops.js';
import { buildBlocks } from '../../../src/sim/workload/transformerOps.js';
import { scenarioOf } from '../../helpers/scenario.js';

const bytes = (ops: Op[]) => ops.reduce((a, o) => a + o.bytes, 0);
const shape = { microBatch: 2, seqLen: 4096, dtype: 'bf16' as const, tp: 1, sequenceParallel: false, flashAttention: true, recompute: 'none' as const, kernels: 'eager' as const };

describe("eager PyTorch's element-wise kernels for Llama (Hugging Face modeling_llama.py)", () => {
  const c = layerContext(modelPreset('llama2-7b'), shape);
  const n = c.tokens * c.h;

  it('RMSNorm: 6 fp32 and bf16 passes forward (36 bytes per element; the per-token rsqrt is not a pass) and 98 bytes backward (the weight gradient, the three kernels of pow and the residual join included), against 4 and 8 fused', () => {
    const s = eagerRmsNorm('ln', c, ['w']);
    expect(s.forward).toHaveLength(6);
    expect(bytes(s.forward)).toBe(36 * n);
    expect(bytes(s.backward)).toBe(98 * n);
    expect(s.backward.filter((o) => o.gradParams).map((o) => o.gradParams)).toEqual([['w']]); // the weight's gradient completes once
  });

  it('rotary embedding on Q and K: 10e bytes per element forward, 15e backward; SwiGLU: 5e forward, 9e backward per MLP element', () => {
    const qk = c.tokens * (c.headsPerRank + c.kvHeadsPerRank) * c.headDim;
    const r = eagerRotary(c);
    expect(bytes(r.forward)).toBe(10 * 2 * qk);
    expect(bytes(r.backward)).toBe(15 * 2 * qk);
    const m = c.tokens * c.ffnPerRank;
    const g = eagerSwiglu(c);
    expect(bytes(g.forward)).toBe(5 * 2 * m);
    expect(bytes(g.backward)).toBe(9 * 2 * m);
  });

  it('keeps more for the backward: per layer (2·(4 + e) + e·f/h)·s·b·h bytes more for Llama, none for GPT or with full recompute', () => {
    const m = modelPreset('llama2-7b');
    const a = { microBatch: 2, seqLen: 4096, tp: 1, sequenceParallel: false, recompute: 'none' as const, flashAttention: true };
    const sbh = 2 * 4096 * m.hidden;
    const extra = activationBytesPerLayer(m, { ...a, eager: true }) - activationBytesPerLayer(m, a);
    expect(extra).toBeCloseTo((2 * (4 + 2) + (2 * m.ffnHidden) / m.hidden) * sbh, -3);
    const gpt = modelPreset('gpt3-1.3b');
    expect(activationBytesPerLayer(gpt, { ...a, eager: true })).toBe(activationBytesPerLayer(gpt, a));
    expect(activationBytesPerLayer(m, { ...a, recompute: 'full', eager: true })).toBe(activationBytesPerLayer(m, { ...a, recompute: 'full' }));
  });

  it('changes Llama layers only: GPT and BERT keep their kernels', () => {
    for (const preset of ['gpt3-1.3b', 'bert-large']) {
      const m = modelPreset(preset);
      const fused = buildBlocks(m, { ...shape, seqLen: 512, kernels: 'fused' });
      const eager = buildBlocks(m, { ...shape, seqLen: 512 });
      expect(eager).toEqual(fused);
    }
  });

  it("slows IBM's Llama-2 7B FSDP step by less than torch.compile sped it up (57% → 68% MFU, 1.19×), which fuses more", () => {
    const raw = { cluster: { preset: 'dgx-a100-80gb', nodes: 2 }, model: { preset: 'llama2-7b' }, training: { globalBatch: 32, microBatch: 2, seqLen: 4096, precision: 'bf16', flashAttention: true }, parallel: { zero: 3 } };
    const fused = simulateStep(scenarioOf(raw)).result.stepTimeS;
    const eager = simulateStep(scenarioOf({ ...raw, training: { ...raw.training, kernels: 'eager' } })).result.stepTimeS;
    expect(eager / fused).toBeGreaterThan(1.05);
    expect(eager / fused).toBeLessThan(68 / 57);
  });
});
