import { activationStage, normStage, type LayerContext } from './layerContext.js';
import { assembleBlock, elementwiseOp, gemmOp, linearStage, type Block, type Stage } from './ops.js';

/**
 * Embedding lookup (vocab-parallel with TP: each rank gathers the rows it owns and the partial results
 * are all-reduced, or reduce-scattered under sequence parallelism — collectives are not ours).
 * Backward scatter-adds dY into the table gradient, which is zero-filled first (V/t × h writes).
 */
export function wordEmbedding(c: LayerContext, weights: string[], prefix = ''): Stage {
  const n = c.tokens * c.h;
  const table = c.vocabPerRank * c.h;
  return {
    forward: [elementwiseOp(`${prefix}embed.lookup`, n, 0, 2 * n * c.e + c.tokens * 8)],
    backward: [elementwiseOp(`${prefix}embed.wgrad`, n, 1, table * c.e + 3 * n * c.e + c.tokens * 8, weights)],
  };
}

/** Adds learned position (and token-type) embeddings; their gradient is a sum over the batch. */
function positionEmbedding(c: LayerContext, params: string[]): Stage {
  const n = c.spTokens * c.h;
  return {
    forward: [elementwiseOp('embed.position', n, 1, 3 * n * c.e)],
    backward: [elementwiseOp('embed.position.wgrad', n, 1, n * c.e + c.s * c.h * c.e, params)],
  };
}

/** Embedding dropout (GPT, BERT): 1-byte mask. */
function embeddingDropout(c: LayerContext): Stage {
  const n = c.spTokens * c.h;
  return {
    forward: [elementwiseOp('embed.dropout', n, 2, 2 * n * c.e + n)],
    backward: [elementwiseOp('embed.dropout.bwd', n, 1, 2 * n * c.e + n)],
  };
}

/** Block −1: token embedding, plus positions, norm and dropout where the architecture has them. */
export function embeddingBlock(c: LayerContext): Block {
  const arch = c.model.arch;
  let stages: Stage[];
  if (arch === 'llama') {
    stages = [wordEmbedding(c, ['model.embed_tokens.weight'])];
  } else if (arch === 'bert') {
    const p = 'bert.embeddings.';
    stages = [
      wordEmbedding(c, [p + 'word_embeddings.weight']),
      positionEmbedding(c, [p + 'position_embeddings.weight', p + 'token_type_embeddings.weight']),
      normStage('embed.norm', c, [p + 'LayerNorm.weight', p + 'LayerNorm.bias']),
      embeddingDropout(c),
    ];
  } else {
    stages = [
      wordEmbedding(c, ['transformer.wte.weight']),
      positionEmbedding(c, ['transformer.wpe.weight']),
      embeddingDropout(c),
    ];
  }
  return assembleBlock('embedding', -1, stages);
}

/**
 * Cross-entropy over the vocab-parallel logits (T × V/t per rank). As implemented (HF upcasts the logits;
 * Megatron's vocab-parallel loss works in fp32): reads the logits, writes an fp32 copy and keeps fp32
 * probabilities for the backward, which reads them and writes dLogits.
 */
function lossStage(c: LayerContext): Stage {
  const n = c.tokens * c.vocabPerRank;
  if (c.eager) return eagerLossStage(c, n);
  return {
    forward: [elementwiseOp('loss', n, 5, n * (c.e + 8))],
    backward: [elementwiseOp('loss.bwd', n, 2, n * (4 + c.e))],
  };
}

/**
 * Cross-entropy as eager PyTorch runs it (`training.kernels: eager`: Hugging Face's `logits.float()` and
 * `CrossEntropyLoss`, or autocast, which runs cross_entropy in fp32), one kernel per aten op over the T × V/t logits:
 * forward the widening cast (read e, write 4) and log_softmax (read 4, write 4; its passes over a row after the first
 * read it from L2), nll_loss reading one element a row; backward nll_loss_backward's zero-filled fp32 gradient (write
 * 4, then one element a row), log_softmax_backward (read the gradient and the output, write 4) and the cast back (read
 * 4, write e): 36 bytes an element at e = 2, where the fused path moves 16.
 */
function eagerLossStage(c: LayerContext, n: number): Stage {
  return {
    forward: [elementwiseOp('loss.cast', n, 0, n * (c.e + 4)), elementwiseOp('loss', n, 5, n * 8)],
    backward: [
      elementwiseOp('loss.grad.zero', n, 0, n * 4),
      elementwiseOp('loss.bwd', n, 2, n * 12),
      elementwiseOp('loss.cast.bwd', n, 0, n * (4 + c.e)),
    ],
  };
}

/** Block `layers`: final norm (or BERT's MLM transform), LM head / MLM decoder, loss. */
export function headBlock(c: LayerContext): Block {
  const m = c.model;
  const T = c.tokens;
  const stages: Stage[] = [];
  let headParams: string[];
  if (m.arch === 'bert') {
    const p = 'cls.predictions.';
    // The MLM transform (dense h×h, GELU, LayerNorm) is replicated across TP ranks.
    stages.push(
      linearStage('mlm.transform', T, c.h, c.h, c.dtype, [p + 'transform.dense.weight', p + 'transform.dense.bias']),
      activationStage(c, T, c.h),
      normStage('mlm.norm', c, [p + 'transform.LayerNorm.weight', p + 'transform.LayerNorm.bias'], T),
    );
    headParams = m.tiedEmbeddings ? [p + 'bias'] : [p + 'decoder.weight', p + 'bias'];
  } else {
    const normParams =
      m.arch === 'llama' ? ['model.norm.weight'] : ['transformer.ln_f.weight', 'transformer.ln_f.bias'];
    stages.push(normStage('final_norm', c, normParams));
    // Tied: the LM head's weight gradient lands in the embedding table, complete only after the
    // embedding's backward, so it is listed there.
    headParams = m.tiedEmbeddings ? [] : ['lm_head.weight'];
  }
  stages.push(...outputHeadStages(c, headParams));
  return assembleBlock('head', m.layers, stages);
}

/**
 * The LM head's GEMMs over the vocabulary-parallel logits and the loss; `headParams` the weights whose gradient the
 * weight-gradient GEMM completes (none where another pass through the same head completes it).
 */
export function outputHeadStages(c: LayerContext, headParams: string[], prefix = ''): Stage[] {
  const T = c.tokens;
  // The head's leading dimensions are the hidden size and the vocabulary per rank (never the token count).
  const lead = [c.h, c.vocabPerRank];
  return [
    {
      forward: [gemmOp(`${prefix}lm_head`, T, c.vocabPerRank, c.h, 1, c.dtype, undefined, lead)],
      backward: [
        gemmOp(`${prefix}lm_head.dgrad`, T, c.h, c.vocabPerRank, 1, c.dtype, undefined, lead),
        gemmOp(`${prefix}lm_head.wgrad`, c.h, c.vocabPerRank, T, 1, c.dtype, headParams, lead),
      ],
    },
    lossStage(c),
  ];
}
