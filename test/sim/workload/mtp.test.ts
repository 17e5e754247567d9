import { describe, expect, it } from 'vitest';
import { parameterCount, parameterTensors, type ModelSpec } from '../../../src/sim/workload/model.js';
import { modelPreset } from '../../../src/sim/workload/modelPresets.js';
import type { MicroBatchShape } from '../../../src/sim/workload/ops.js';
import { buildBlocks } from '../../../src/sim/workload/transformerOps.js';
import { modelFlopsPerStep } from '../../../src/sim/workload/flops.js';
import { stageMemories } from '../../../src/sim/memory/stageMemory.js';
import { simulateStep } from '../../../src/sim/simulateStep.js';
import { scenarioOf } from '../../helpers/scenario.js';
import { layerLoads } from '../../../src/sim/workload/routing.js';

const shape: MicroBatchShape = {
  microBatch: 1,
  seqLen: 1024,
  dtype: 'bf16',
  tp: 1,
  sequenceParallel: false,
  flashAttention: true,
  recompute: 'none',
};

/** A small model with experts and latent attention: DeepSeek-V3's shape cut to 4 layers, 2 of them dense. */
const SMALL_V3: ModelSpec = {
  ...modelPreset('deepseek-v3'),
  name: 'small-v3',
  layers: 4,
  moe: { ...modelPreset('deepseek-v3').moe!, denseLayers: 2 },
  mtpLayers: 1,
};

const withoutMtp = (m: ModelSpec): ModelSpec => ({ ...m, mtpLayers: 0 });

describe('multi-token prediction', () => {
  it('adds one layer with experts, eh_proj (2h × h) and two norms per depth, and reuses the embedding and head', () => {
    for (const depths of [1, 2]) {
      const m = { ...SMALL_V3, mtpLayers: depths };
      const added = parameterCount(m) - parameterCount(withoutMtp(m));
      // A layer with experts of the main model: layer 3 (past the 2 dense ones).
      const moeLayer = parameterTensors(m)
        .filter((t) => t.layer === 3)
        .reduce((s, t) => s + t.elements, 0);
      const h = m.hidden;
      expect(added).toBe(depths * (moeLayer + 2 * h * h + 3 * h));
    }
  });

  it('runs after the head, and lists every trainable tensor exactly once in some backward op', () => {
    const blocks = buildBlocks(SMALL_V3, shape);
    expect(blocks.map((b) => b.name).slice(-4)).toEqual(['head', 'mtp.0.input', 'layer.5', 'mtp.0.head']);
    expect(blocks.slice(-3).every((b) => b.layer === 5)).toBe(true);
    const seen = blocks.flatMap((b) => b.backward.flatMap((op) => op.gradParams ?? [])).sort();
    expect(seen).toEqual(
      parameterTensors(SMALL_V3)
        .map((t) => t.name)
        .sort(),
    );
  });

  it(
    'adds to the model FLOPs 6 · tokens · (the module’s ' + 'active parameters + the head), plus one layer’s attention',
    () => {
      const m = SMALL_V3;
      const tokens = 1024;
      const added = modelFlopsPerStep(m, 1, tokens) - modelFlopsPerStep(withoutMtp(m), 1, tokens);
      const moe = m.moe!;
      const h = m.hidden;
      const expert = 3 * h * moe.expertFfnHidden;
      // The module's matrices a token passes through: attention projections, router, k experts, shared expert, eh_proj.
      const layerTensors = parameterTensors(m).filter((t) => t.layer === 5 && !t.expert && t.name.endsWith('.weight'));
      const dense = layerTensors.filter((t) => !t.name.includes('norm')).reduce((s, t) => s + t.elements, 0);
      const matrices = dense + moe.topK * expert;
      const head = m.vocab * h;
      // Latent attention's core: QKᵀ over 192-wide heads and ·V over 128-wide, causal not discounted.
      const mla = m.mla!;
      const attention = 6 * tokens * tokens * m.heads * (mla.qkNopeHeadDim + mla.qkRopeHeadDim + mla.vHeadDim);
      const closedForm = 6 * tokens * (matrices + head) + attention;
      // The rest is elementwise work (norms, SwiGLU, loss): well under 1%.
      expect(added / closedForm).toBeGreaterThan(1);
      expect(added / closedForm).toBeLessThan(1.01);
    },
  );

  it('puts the module, and on a pipeline a copy of the embedding, on the last stage only', () => {
    const scenario = (mtpLayers: number, pp: number) =>
      scenarioOf({
        name: 'mtp',
        cluster: { preset: 'hgx-h800', nodes: 1 },
        model: { ...SMALL_V3, preset: undefined, mtpLayers },
        training: { globalBatch: 8, microBatch: 1, seqLen: 1024 },
        parallel: { pp, ep: 8 / pp, zero: 1, layersPerStage: pp === 2 ? [2, 2] : undefined },
      });
    const m = SMALL_V3;
    const h = m.hidden;
    const before = stageMemories(scenario(0, 2));
    const after = stageMemories(scenario(1, 2));
    expect(after[0].paramsPerRank).toBe(before[0].paramsPerRank);
    const moduleParams = parameterTensors(m)
      .filter((t) => t.layer === 5)
      .reduce((s, t) => s + (t.expert ? t.elements / 4 : t.elements), 0);
    expect(after[1].paramsPerRank - before[1].paramsPerRank).toBe(moduleParams + m.vocab * h);
    expect(after[1].activationsBytes).toBeGreaterThan(before[1].activationsBytes);
    // Without a pipeline the one stage's embedding serves the module too.
    const single = stageMemories(scenario(1, 1))[0].paramsPerRank - stageMemories(scenario(0, 1))[0].paramsPerRank;
    expect(single).toBe(
      parameterTensors(m)
        .filter((t) => t.layer === 5)
        .reduce((s, t) => s + (t.expert ? t.elements / 8 : t.elements), 0),
    );
  });

  it('draws the module layer’s expert load like any layer’s, by its own index', () => {
    const loads = layerLoads(SMALL_V3, 8, { skew: 0.5, padToCapacity: false }, 1)!;
    expect(loads).toHaveLength(6);
    expect(loads[5]?.busiestFactor).toBeGreaterThan(1);
    expect(loads[4]).toBeUndefined(); // the head
    expect(loads[1]).toBeUndefined(); // a dense layer
    expect(layerLoads(withoutMtp(SMALL_V3), 8, { skew: 0.5, padToCapacity: false }, 1)).toHaveLength(4);
  });

  it('makes the step longer, and is refused with tensor parallelism', () => {
    const run = (mtpLayers: number) =>
      simulateStep(
        scenarioOf({
          name: 'mtp',
          cluster: { preset: 'hgx-h800', nodes: 1 },
          model: { ...SMALL_V3, preset: undefined, mtpLayers },
          training: { globalBatch: 8, microBatch: 1, seqLen: 1024 },
          parallel: { pp: 2, ep: 4, zero: 1, layersPerStage: [2, 2] },
        }),
      ).result.stepTimeS;
    expect(run(1)).toBeGreaterThan(run(0));
    expect(() =>
      scenarioOf({
        name: 'mtp tp',
        cluster: { preset: 'hgx-h800', nodes: 1 },
        model: { preset: 'llama3-8b', mtpLayers: 1 },
        training: { globalBatch: 8, microBatch: 1, seqLen: 1024 },
        parallel: { tp: 2, sequenceParallel: true },
      }),
    ).toThrow(/parallel\.tp.*multi-token prediction \(model\.mtpLayers\) is modelled at tp 1 only/);
  });
});
