import { ScenarioError } from '../errors.js';
import { mlpSizesOf, type ModelSpec } from './model.js';
import {
  activationElementBytes,
  assembleBlock,
  elementwiseOp,
  linearStage,
  type Block,
  type MicroBatchShape,
  type Op,
  type Stage,
} from './ops.js';

/**
 * A multi-layer perceptron: linear layers with ReLU between them and softmax cross-entropy at the end.
 * Rows are microBatch·seqLen samples (seqLen is 1 for a plain classifier). With TP, layers pair up as
 * Megatron's MLP does: even-indexed layers column-parallel (output ÷ t), odd-indexed row-parallel
 * (input ÷ t); an unpaired last layer stays column-parallel.
 * Recompute `full` re-runs each block's forward (except the loss); `selective` has nothing to re-run.
 */
export function buildMlpBlocks(model: ModelSpec, shape: MicroBatchShape): Block[] {
  const sizes = mlpSizesOf(model);
  const { tp } = shape;
  if (!Number.isInteger(tp) || tp < 1) throw new ScenarioError('parallel.tp', `${tp} is not a positive integer`);
  const rows = shape.microBatch * shape.seqLen;
  const e = activationElementBytes(shape.dtype);
  const blocks: Block[] = [];
  const last = sizes.length - 2;
  for (let i = 0; i <= last; i++) {
    const column = i % 2 === 0;
    const inF = column ? sizes[i] : sizes[i] / tp;
    const outF = column ? sizes[i + 1] / tp : sizes[i + 1];
    const params = [`layers.${i}.weight`, `layers.${i}.bias`];
    // The first layer's input is data: no gradient wrt it is needed.
    const stages: Stage[] = [linearStage(`fc${i}`, rows, inF, outF, shape.dtype, params, i > 0)];
    const n = rows * outF;
    if (i < last) {
      stages.push({
        forward: [elementwiseOp(`relu${i}`, n, 1, 2 * n * e)],
        backward: [elementwiseOp(`relu${i}.bwd`, n, 1, 3 * n * e)],
      });
    }
    const again: Op[] = shape.recompute === 'full' ? stages.flatMap((s) => s.forward) : [];
    if (i === last) {
      stages.push({
        forward: [elementwiseOp('loss', n, 5, n * (e + 8))],
        backward: [elementwiseOp('loss.bwd', n, 2, n * (4 + e))],
      });
    }
    blocks.push(assembleBlock(`fc.${i}`, i, stages, again));
  }
  return blocks;
}
