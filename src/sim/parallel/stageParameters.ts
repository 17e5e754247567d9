import { elementsPerModelRank, parameterTensors, lastStageEmbeddingCopy, type ParamTensor } from '../workload/model.js';
import type { StepContext } from './stepContext.js';

/** The parameters one pipeline stage holds, which its gradient reduction reduces and its memory account counts. */
export interface StageParameters {
  /** In registration order; the last stage's copy of tied embeddings last. */
  tensors: ParamTensor[];
  /** Tensor name → the virtual stage whose backward makes its gradient. */
  virtualStageOf: Map<string, number>;
  /** Tensor name → the tensor whose gradient's completion stands for its own (the tied copy's: the final norm's). */
  readyWith: Map<string, string>;
  /** Elements one TP rank holds (before ZeRO sharding), its experts' share under expert parallelism. */
  elementsPerRank: number;
  /** Of those, the routed experts' (0 without experts): reduced and sharded over the expert-data-parallel ranks. */
  expertElementsPerRank: number;
  /**
   * Of those, the weights FP8 training casts to FP8: the transformer layers' linear weights (tensor-parallel `.weight`
   * tensors; norms are not split over TP, and biases, embeddings and the head stay bf16; workload/fp8.ts). 0 unless
   * the step trains in fp8.
   */
  fp8WeightElementsPerRank: number;
}

/**
 * The parameters of stage `stage`: the layers of its chunks (the embeddings with the first virtual stage; the final
 * norm and head with the last), and on the last stage of a pipeline the copy of tied embeddings.
 */
export function stageParameters(ctx: StepContext, stage: number): StageParameters {
  const { model } = ctx.setup;
  const { pp } = ctx;
  const lastVirtual = ctx.virtualStageLayers.length - 1;
  const ofLayer = new Map<number, number>();
  ctx.virtualStageLayers.forEach((layers, vs) => {
    if (vs % pp === stage) for (const l of layers) ofLayer.set(l, vs);
  });
  const virtualStageOfLayer = (layer: number) =>
    layer < 0
      ? stage === 0
        ? 0
        : undefined
      : layer >= model.layers
        ? stage === pp - 1
          ? lastVirtual
          : undefined
        : ofLayer.get(layer);
  const virtualStageOf = new Map<string, number>();
  const tensors: ParamTensor[] = [];
  for (const t of parameterTensors(model)) {
    const vs = virtualStageOfLayer(t.layer);
    if (vs === undefined) continue;
    tensors.push(t);
    virtualStageOf.set(t.name, vs);
  }
  const readyWith = new Map<string, string>();
  // The last stage's copy of tied embeddings is its own parameter there. Its gradient comes from the LM head, in the
  // last chunk, whose backward ends with the final norm's: that gradient's completion stands for the copy's.
  const copy = pp > 1 && stage === pp - 1 ? lastStageEmbeddingCopy(model) : undefined;
  if (copy) {
    tensors.push(copy);
    virtualStageOf.set(copy.name, lastVirtual);
    const finalNorm = tensors.find((t) => t.layer === model.layers && t !== copy);
    if (finalNorm) readyWith.set(copy.name, finalNorm.name);
  }
  const perRank = (t: ParamTensor) => elementsPerModelRank(t, ctx.tp, ctx.ep, ctx.etp);
  const elementsPerRank = tensors.reduce((a, t) => a + perRank(t), 0);
  const expertElementsPerRank = tensors.filter((t) => t.expert).reduce((a, t) => a + perRank(t), 0);
  const fp8Weight = (t: ParamTensor) =>
    t.tpSharded && t.name.endsWith('.weight') && t.layer >= 0 && t.layer < model.layers;
  const fp8WeightElementsPerRank =
    ctx.precision.gemmDtype === 'fp8' ? tensors.filter(fp8Weight).reduce((a, t) => a + perRank(t), 0) : 0;
  return { tensors, virtualStageOf, readyWith, elementsPerRank, expertElementsPerRank, fp8WeightElementsPerRank };
}
