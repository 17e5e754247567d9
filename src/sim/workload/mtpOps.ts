import { outputHeadStages, wordEmbedding } from './headOps.js';
import { normStage, type LayerContext } from './layerContext.js';
import { mtpLayerIndex, mtpPrefix } from './mtp.js';
import { assembleBlock, elementwiseOp, linearStage, type Block } from './ops.js';

/**
 * The input of multi-token-prediction module d (mtp.ts) on one rank: the embedding lookup of the shifted tokens, the
 * norms of that embedding and of the hidden state, their concatenation (2h wide; its backward is two views) and the
 * 2h → h projection. The lookup's table is the main model's: its gradient is completed by the embedding's own
 * backward (or, on a pipeline, stands with the last stage's copy), so this lookup lists none.
 */
export function mtpInputBlock(c: LayerContext, depth: number): Block {
  const p = mtpPrefix(depth);
  const n = c.tokens * c.h;
  return assembleBlock(`mtp.${depth}.input`, mtpLayerIndex(c.model, depth), [
    wordEmbedding(c, [], 'mtp.'),
    normStage('mtp.enorm', c, [p + 'enorm.weight']),
    normStage('mtp.hnorm', c, [p + 'hnorm.weight']),
    { forward: [elementwiseOp('mtp.concat', 2 * n, 0, 4 * n * c.e)], backward: [] },
    linearStage('mtp.eh_proj', c.tokens, 2 * c.h, c.h, c.dtype, [p + 'eh_proj.weight']),
  ]);
}

/**
 * The output of module d: its final norm, then the main model's LM head and a cross-entropy on the tokens d + 1
 * further ahead. The head's weight gradient is completed by the main head's pass, which runs its backward later.
 */
export function mtpHeadBlock(c: LayerContext, depth: number): Block {
  const p = mtpPrefix(depth);
  return assembleBlock(`mtp.${depth}.head`, mtpLayerIndex(c.model, depth), [
    normStage('mtp.final_norm', c, [p + 'final_layernorm.weight']),
    ...outputHeadStages(c, [], 'mtp.'),
  ]);
}
