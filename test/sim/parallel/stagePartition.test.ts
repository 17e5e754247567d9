import { describe, expect, it } from 'vitest';
import { compileStep } from '../../../src/sim/parallel/stepCompiler.js';
import { stageMemories } from '../../../src/sim/memory/stageMemory.js';
import { parameterCount, parameterTensors, lastStageEmbeddingCopy } from '../../../src/sim/workload/model.js';
import { stageParameters } from '../../../src/sim/parallel/stageParameters.js';
import { stepContext } from '../../../src/sim/parallel/stepContext.js';
import { scenarioOf } from '../../helpers/scenario.js';

// The step compiler and the memory account take a stage's parameters from the layers it holds (stageParameters.ts).
// These check that partition against what the compiled backward passes really make, and against the model's size.

function setup(model: Record<string, unknown>, parallel: Record<string, unknown>) {
  return scenarioOf({
    cluster: { preset: 'dgx-a100-80gb', nodes: 1 },
    model: { layers: 4, seqLen: 256, ...model },
    training: { globalBatch: 8, microBatch: 1 },
    parallel,
  });
}

const cases: [string, Record<string, unknown>][] = [
  ['gpt', { preset: 'gpt3-1.3b' }],
  ['llama', { preset: 'llama2-7b' }],
  ['bert (tied embeddings)', { preset: 'bert-large' }],
];

/** Tensor name → the virtual stages whose compiled backward passes make its gradient. */
function gradientMakers(s: ReturnType<typeof setup>): Map<string, Set<number>> {
  const plan = compileStep(s);
  const pp = s.parallel.pp;
  const makers = new Map<string, Set<number>>();
  for (const st of plan.stages) {
    st.chunks.forEach((blocks, c) => {
      for (const b of blocks)
        for (const op of b.backward)
          for (const name of op.gradParams ?? [])
            (makers.get(name) ?? makers.set(name, new Set()).get(name)!).add(c * pp + st.stage);
    });
  }
  return makers;
}

describe('a stage holds the parameters whose gradients its backward passes make', () => {
  for (const [name, model] of cases) {
    for (const parallel of [
      { pp: 1 },
      { pp: 2 },
      { pp: 4 },
      { pp: 2, tp: 2 },
      { pp: 2, virtualStages: 2, schedule: 'interleaved' },
    ]) {
      it(`${name}, ${JSON.stringify(parallel)}`, () => {
        const s = setup(model, parallel);
        const ctx = stepContext(s);
        const makers = gradientMakers(s);
        const copy = lastStageEmbeddingCopy(s.model)?.name;
        const held = new Set<string>();
        for (let stage = 0; stage < s.parallel.pp; stage++) {
          const params = stageParameters(ctx, stage);
          for (const t of params.tensors) {
            held.add(t.name);
            // Each gradient is made in exactly one virtual stage, the one the partition gives; the tied copy's is the
            // LM head's, made with the final norm's.
            const maker = t.name === copy ? params.readyWith.get(t.name)! : t.name;
            expect([...makers.get(maker)!]).toEqual([params.virtualStageOf.get(t.name)]);
          }
          expect(stageMemories(s)[stage].paramsPerRank).toBe(params.elementsPerRank);
          expect(compileStep(s).stages[stage].gradients.paramsPerRank).toBe(params.elementsPerRank);
        }
        // Every gradient the passes make belongs to a held parameter.
        for (const made of makers.keys()) expect(held.has(made)).toBe(true);
      });
    }
  }

  it('without TP the stages hold the whole model once, plus the last stage copy of tied embeddings', () => {
    for (const [, model] of cases) {
      const s = setup(model, { pp: 4 });
      const held = compileStep(s).stages.reduce((a, st) => a + st.gradients.paramsPerRank, 0);
      const copy = lastStageEmbeddingCopy(s.model)?.elements ?? 0;
      expect(held).toBe(parameterCount(s.model) + copy);
      expect(parameterTensors(s.model).length).toBeGreaterThan(0);
    }
  });
});
