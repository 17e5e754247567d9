import type { ModelSpec } from './model.js';
import { blocksFlops, type RecomputeMode } from './ops.js';
import { buildBlocks } from './transformerOps.js';

/**
 * FLOPs of one training step for the whole model (all ranks together), summed from the ops that
 * `buildBlocks` emits for one sample and multiplied by the global batch (FLOPs are linear in the batch).
 * Tensor parallelism does not change the total, so one rank with t = 1 is counted.
 */
function stepFlops(model: ModelSpec, globalBatch: number, seqLen: number, recompute: RecomputeMode): number {
  const blocks = buildBlocks(model, {
    microBatch: 1,
    seqLen,
    dtype: 'bf16',
    tp: 1,
    sequenceParallel: false,
    flashAttention: true,
    recompute,
  });
  return blocksFlops(blocks) * globalBatch;
}

/**
 * Model FLOPs per step: forward + backward without recompute, the numerator of MFU (Chowdhery et al.
 * 2022, PaLM, appendix B; Korthikanti et al. 2022 §6).
 * @param globalBatch sequences per step
 * @param seqLen tokens per sequence (defaults to the model's)
 */
export function modelFlopsPerStep(model: ModelSpec, globalBatch: number, seqLen = model.seqLen): number {
  return stepFlops(model, globalBatch, seqLen, 'none');
}

/**
 * Hardware FLOPs per step: what the GPUs execute, including recompute (full: one more forward of every
 * transformer layer; selective: one more attention core).
 */
export function hardwareFlopsPerStep(
  model: ModelSpec,
  globalBatch: number,
  seqLen = model.seqLen,
  recompute: RecomputeMode = 'none',
): number {
  return stepFlops(model, globalBatch, seqLen, recompute);
}

/**
 * Megatron-LM's closed form for a GPT step (Narayanan et al., SC21, eq. 3):
 * F = 96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h)) with full activation recompute, and
 * 72·B·s·l·h²·(1 + s/(6h) + V/(12·l·h)) without. Assumes an MLP of 4h and multi-head attention and
 * ignores norms, biases and the loss.
 */
export function megatronFlopsPerStep(
  model: ModelSpec,
  globalBatch: number,
  seqLen: number,
  fullRecompute: boolean,
): number {
  const { layers: l, hidden: h, vocab: V } = model;
  const s = seqLen;
  const base = globalBatch * s * l * h * h;
  return fullRecompute
    ? 96 * base * (1 + s / (6 * h) + V / (16 * l * h))
    : 72 * base * (1 + s / (6 * h) + V / (12 * l * h));
}
