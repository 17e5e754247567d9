import type { ModelSpec } from '../workload/model.js';
import { elementsPerTpRank, parameterTensors, tiedEmbeddingCopy, type ParamTensor } from '../workload/model.js';
import type { StagePlan } from './stepTypes.js';

/** The parameters of one pipeline stage, as its gradient reduction sees them. */
export interface StageParameters {
  /** In registration order; the last stage's copy of tied embeddings last. */
  tensors: ParamTensor[];
  /** Tensor name → the virtual stage whose backward makes its gradient. */
  virtualStageOf: Map<string, number>;
  /** Tensor name → the tensor whose gradient's completion stands for its own (the tied copy's: the final norm's). */
  readyWith: Map<string, string>;
  /** Elements one TP rank holds (before ZeRO sharding). */
  elementsPerRank: number;
}

/** The parameters whose gradients stage `st`'s backward passes make, and where each is made. */
export function stageParameters(model: ModelSpec, st: StagePlan, pp: number, tp: number): StageParameters {
  const names = new Map<string, number>();
  st.chunks.forEach((blocks, c) => {
    for (const b of blocks) for (const op of b.backward) for (const t of op.gradParams ?? []) names.set(t, c * pp + st.stage);
  });
  const tensors = parameterTensors(model).filter((t) => names.has(t.name));
  const readyWith = new Map<string, string>();
  // The last stage's copy of tied embeddings is its own parameter there. Its gradient comes from the LM head, in the
  // last chunk, whose backward ends with the final norm's: that gradient's completion stands for the copy's.
  const copy = pp > 1 && st.stage === pp - 1 ? tiedEmbeddingCopy(model) : undefined;
  if (copy) {
    tensors.push(copy);
    names.set(copy.name, (st.chunks.length - 1) * pp + st.stage);
    const finalNorm = tensors.find((t) => t.layer === model.layers && t !== copy);
    if (finalNorm) readyWith.set(copy.name, finalNorm.name);
  }
  const elementsPerRank = tensors.reduce((a, t) => a + elementsPerTpRank(t, tp), 0);
  return { tensors, virtualStageOf: names, readyWith, elementsPerRank };
}
