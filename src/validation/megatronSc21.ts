/**
 * The second, published validation set: the weak-scaling table (Table 1) of Narayanan et al., "Efficient
 * Large-Scale Language Model Training on GPU Clusters Using Megatron-LM", SC21 (arXiv 2104.04473): GPT models
 * of 1.7B to 1T parameters on 32 to 3,072 A100 GPUs of Selene (DGX A100 80 GB, 8 × HDR InfiniBand per node).
 * The rows and their source are in test/validation/megatron-sc21-table1.csv (see test/validation/SOURCE.md).
 *
 * How a row becomes a scenario (no constant here is fitted to a row):
 * - dgx-a100-80gb nodes (8 HDR NICs each, the preset's default), nodes = GPUs / 8.
 * - GPT of the row's layers / hidden / heads, FFN 4h, vocabulary 51,200 (already a multiple of 128 × 8, so
 *   Megatron does not pad it), sequence 2,048.
 * - fp16 mixed precision, full activation recomputation, Megatron's fused softmax (no flash attention in 2021).
 * - Micro-batch 1: Table 1 does not give it, and the paper's §5.1 runs use 1 unless said otherwise.
 * - Schedule: the paper says its Table 1 runs use the interleaved schedule with the scatter/gather optimization
 *   (§5.1). The number of model chunks per stage is not given; we take the smallest v ≥ 2 that divides the layers
 *   per stage (an assumption). Rows with pp = 1 have no pipeline.
 * - Framework 'none': the host model in framework.ts describes Megatron-DeepSpeed (its per-layer syncs), not the
 *   2021 Megatron-LM the paper ran. Megatron's local DDP all-reduces its gradient buffer after backward.
 */

import type { StepSetup } from '../sim/setup.js';
import { gptShapeOf, parseCommentedCsv, type PublishedGptShape } from './commentedCsv.js';

export interface MegatronSc21Row extends PublishedGptShape {
  batch: number;
  /** Published achieved teraFLOP/s per GPU (Eq. 3 FLOPs / measured time / GPUs). */
  tflopsPerGpu: number;
  pctPeak: number;
  aggregatePflops: number;
}

export const MEGATRON_SC21_VOCAB = 51200;
export const MEGATRON_SC21_SEQ = 2048;

export interface MegatronSc21Table {
  /** The `# source:` line(s) of the file, without the leading `# `. */
  source: string[];
  rows: MegatronSc21Row[];
}

/** Parses test/validation/megatron-sc21-table1.csv: `#` comment lines (source), a header, then one row per model. */
export function parseMegatronSc21Csv(text: string): MegatronSc21Table {
  const t = parseCommentedCsv(text, 'megatron-sc21 table');
  const rows = t.rows.map((v) => ({
    ...gptShapeOf(t, v),
    batch: v[t.col('batch')],
    tflopsPerGpu: v[t.col('tflops_per_gpu')],
    pctPeak: v[t.col('pct_peak')],
    aggregatePflops: v[t.col('aggregate_pflops')],
  }));
  return { source: t.source, rows };
}

/**
 * FLOPs per iteration as the paper counts them (§5.1, Eq. 3, with activation recomputation):
 * F = 96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h)).
 */
export function megatronFlopsPerIteration(
  batch: number,
  seq: number,
  layers: number,
  hidden: number,
  vocab: number,
): number {
  return 96 * batch * seq * layers * hidden * hidden * (1 + seq / (6 * hidden) + vocab / (16 * layers * hidden));
}

/** Achieved teraFLOP/s per GPU for a row at a given step time, by the paper's formula. */
export function achievedTflopsPerGpu(row: MegatronSc21Row, stepTimeS: number): number {
  return (
    megatronFlopsPerIteration(row.batch, MEGATRON_SC21_SEQ, row.layers, row.hidden, MEGATRON_SC21_VOCAB) /
    (stepTimeS * row.gpus) /
    1e12
  );
}

/**
 * Model chunks per stage for the interleaved schedule: the smallest v ≥ 2 dividing the layers per stage (1 without a
 * pipeline).
 */
export function virtualStagesFor(row: MegatronSc21Row): number {
  if (row.pp <= 1) return 1;
  const perStage = row.layers / row.pp;
  for (let v = 2; v <= perStage; v++) if (perStage % v === 0) return v;
  return 1;
}

/** The scenario (raw, as a file would hold it) for a row. */
export function megatronSc21Scenario(row: MegatronSc21Row): Record<string, unknown> {
  const dp = row.gpus / (row.tp * row.pp);
  const v = virtualStagesFor(row);
  return {
    name: `megatron-sc21-${row.paramsB}b-${row.gpus}gpu-tp${row.tp}-pp${row.pp}-dp${dp}`,
    cluster: { preset: 'dgx-a100-80gb', nodes: row.gpus / 8 },
    model: {
      arch: 'gpt',
      layers: row.layers,
      hidden: row.hidden,
      heads: row.heads,
      ffnHidden: 4 * row.hidden,
      seqLen: MEGATRON_SC21_SEQ,
      vocab: MEGATRON_SC21_VOCAB,
      tiedEmbeddings: true,
    },
    training: { globalBatch: row.batch, microBatch: 1, precision: 'fp16', optimizer: 'adam', flashAttention: false },
    parallel: {
      tp: row.tp,
      pp: row.pp,
      dp,
      schedule: v > 1 ? 'interleaved' : '1f1b',
      virtualStages: v,
      recompute: 'full',
      ddp: { bucketMB: 1e6, overlap: false },
    },
  };
}

export function megatronSc21Setup(
  row: MegatronSc21Row,
  resolve: (raw: Record<string, unknown>, name: string, dir: string) => StepSetup,
): StepSetup {
  return resolve(megatronSc21Scenario(row), 'megatron-sc21', '.');
}
