import { describe, expect, it } from 'vitest';
import { modelPreset } from '../../../src/sim/workload/modelPresets.js';
import {
  activeParameterCount,
  elementsPerModelRank,
  parameterCount,
  parameterTensors,
} from '../../../src/sim/workload/model.js';

/** Total and active parameters as each model's publisher states them, in billions (sources in modelPresets.ts). */
const PUBLISHED: { name: string; totalB: number; activeB: number; activeLeavesOutEmbedding?: boolean }[] = [
  { name: 'mixtral-8x7b', totalB: 46.7, activeB: 12.9 },
  { name: 'mixtral-8x22b', totalB: 141, activeB: 39 },
  { name: 'qwen3-30b-a3b', totalB: 30.5, activeB: 3.3 },
  { name: 'qwen3-235b-a22b', totalB: 235, activeB: 22 },
  { name: 'qwen2-57b-a14b', totalB: 57, activeB: 14 },
  // The report's 671B and 37B are the main model's: its multi-token-prediction module is counted apart (below).
  { name: 'deepseek-v3', totalB: 671, activeB: 37 },
  { name: 'gpt-oss-120b', totalB: 116.8, activeB: 5.1, activeLeavesOutEmbedding: true },
];

/** Half the unit of a published figure's last digit: 0.05 for 3.3, 0.5 for 141. */
function halfLastDigit(x: number): number {
  const decimals = (String(x).split('.')[1] ?? '').length;
  return 0.5 * 10 ** -decimals;
}

describe('mixture-of-experts presets', () => {
  for (const p of PUBLISHED) {
    it(`${p.name} has its published ${p.totalB}B parameters, ${p.activeB}B active`, () => {
      const model = { ...modelPreset(p.name), mtpLayers: 0 };
      const embedding = model.vocab * model.hidden;
      const active = activeParameterCount(model) - (p.activeLeavesOutEmbedding ? embedding : 0);
      // Within the rounding of the published figure (half its last digit) and 0.5% for the small tensors left out.
      expect(Math.abs(parameterCount(model) / 1e9 - p.totalB)).toBeLessThanOrEqual(
        halfLastDigit(p.totalB) + 0.005 * p.totalB,
      );
      expect(Math.abs(active / 1e9 - p.activeB)).toBeLessThanOrEqual(halfLastDigit(p.activeB) + 0.005 * p.activeB);
    });
  }

  it(
    'gives DeepSeek-V3 its multi-token-prediction module: ' + '685B − 671B = 14B with its embedding and head copies',
    () => {
      // DeepSeek-V3 report §2.2 and the Hugging Face checkpoint (685B in all, 671B the main model; both rounded): the
      // module's layer with experts, its projection and norms, and the copies of the embedding and head it stores.
      const model = modelPreset('deepseek-v3');
      expect(model.mtpLayers).toBe(1);
      const module = parameterCount(model) - parameterCount({ ...model, mtpLayers: 0 });
      const stored = module + 2 * model.vocab * model.hidden;
      expect(stored / 1e9).toBeGreaterThan(13.5 - 0.5);
      expect(stored / 1e9).toBeLessThan(14.5);
      expect((parameterCount(model) + 2 * model.vocab * model.hidden) / 1e9).toBeGreaterThan(684.5 - 0.5 - 0.005 * 685);
      const names = parameterTensors(model).filter((t) => t.name.startsWith('mtp.layers.0.'));
      expect(names.map((t) => t.name)).toContain('mtp.layers.0.eh_proj.weight');
      expect(names.find((t) => t.name.endsWith('eh_proj.weight'))!.elements).toBe(2 * 7168 * 7168);
      expect(names.filter((t) => t.expert)).toHaveLength(2);
    },
  );

  it('counts every expert once and splits the experts, not the router, over expert parallelism', () => {
    const model = modelPreset('mixtral-8x7b');
    const tensors = parameterTensors(model);
    const experts = tensors.filter((t) => t.expert);
    // Two expert tensors a layer (fused gate/up, down), each holding all 8 experts.
    expect(experts).toHaveLength(2 * model.layers);
    expect(experts[0].elements).toBe(8 * 4096 * 2 * 14336);
    const router = tensors.find((t) => t.name.endsWith('mlp.router.weight'))!;
    expect(router.expert).toBeUndefined();
    expect(elementsPerModelRank(experts[0], 2, 4)).toBe((8 * 4096 * 2 * 14336) / 8);
    expect(elementsPerModelRank(router, 2, 4)).toBe(8 * 4096);
  });

  it('is no different from a dense model when it has no experts', () => {
    const dense = modelPreset('llama3-8b');
    expect(activeParameterCount(dense)).toBe(parameterCount(dense));
  });
});
