import { llamaLayerPrefix } from './mtp.js';
import type { LayerContext } from './layerContext.js';
import { mlaQkHeadDim, type MlaSpec } from './mla.js';
import { elementwiseOp, linearStage, type Stage } from './ops.js';

/** RMSNorm over a latent of `width` (≈ 4 FLOPs an element; backward 2×, reading dy, x and writing dx). */
function latentNorm(c: LayerContext, name: string, width: number, param: string): Stage {
  const n = c.spTokens * width;
  return {
    forward: [elementwiseOp(name, n, 4, 2 * n * c.e)],
    backward: [elementwiseOp(`${name}.bwd`, n, 8, 4 * n * c.e, [param])],
  };
}

/**
 * Latent attention's projections in place of QKV (mla.ts), on one rank: the query's down-projection, norm and
 * up-projection (or one projection where the queries are not compressed), then the keys' and values' joint
 * down-projection (with the shared rotary key), norm and up-projection; the attention core and the output projection
 * follow as for any attention. Under tensor parallelism as Megatron-Core's MLA spec splits it: the down-projections
 * and norms are whole on every rank and run on its own tokens (1/t of them with sequence parallelism), the
 * up-projections are column-parallel over the heads (their collectives: tpSync.ts `latentSyncs`).
 */
export function mlaProjectionStages(c: LayerContext, mla: MlaSpec, layer: number): Stage[] {
  const p = `${llamaLayerPrefix(c.model, layer)}self_attn.`;
  const heads = c.headsPerRank;
  const query =
    mla.qLoraRank === 0
      ? [linearStage('q_proj', c.tokens, c.h, heads * mlaQkHeadDim(mla), c.dtype, [p + 'q_proj.weight'])]
      : [
          linearStage('q_down', c.spTokens, c.h, mla.qLoraRank, c.dtype, [p + 'q_a_proj.weight']),
          latentNorm(c, 'q_norm', mla.qLoraRank, p + 'q_a_layernorm.weight'),
          linearStage('q_up', c.tokens, mla.qLoraRank, heads * mlaQkHeadDim(mla), c.dtype, [p + 'q_b_proj.weight']),
        ];
  return [
    ...query,
    linearStage('kv_down', c.spTokens, c.h, mla.kvLoraRank + mla.qkRopeHeadDim, c.dtype, [
      p + 'kv_a_proj_with_mqa.weight',
    ]),
    latentNorm(c, 'kv_norm', mla.kvLoraRank, p + 'kv_a_layernorm.weight'),
    linearStage('kv_up', c.tokens, mla.kvLoraRank, heads * (mla.qkNopeHeadDim + mla.vHeadDim), c.dtype, [
      p + 'kv_b_proj.weight',
    ]),
  ];
}
