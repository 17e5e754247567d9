/**
 * The third, published validation set: the end-to-end iteration times of Korthikanti et al., "Reducing
 * Activation Recomputation in Large Transformer Models" (MLSys 2023, arXiv 2205.05198), Table 5, for the four
 * models of its Table 3 (22B to 1T parameters, tensor parallel 8, no data parallelism, on Selene), each run
 * two ways: full activation recomputation, and the paper's sequence parallelism with selective recomputation.
 * It exercises exactly the parts a strategy question turns on: recompute modes, sequence parallelism, deep
 * interleaved pipelines. Rows and source: test/validation/megatron-sp22-table5.csv (see SOURCE.md).
 *
 * How a row becomes a scenario (no constant here is fitted to a row):
 * - dgx-a100-80gb nodes (8 HDR NICs each), nodes = GPUs / 8 (the 22B model on one node).
 * - GPT with the row's heads / hidden / layers, FFN 4h, vocabulary 51,200, sequence 2,048, fp16 mixed precision,
 *   Megatron's unfused attention (2022, before flash attention), the row's global and micro batch, dp 1.
 * - Interleaved schedule with the row's model chunks per stage (3 for 175B and 530B, as §6 says); 1F1B otherwise.
 * - Framework 'none' (Megatron-LM itself, not Megatron-DeepSpeed: its host model does not apply).
 */

import type { StepSetup } from '../sim/setup.js';
import { gptShapeOf, parseCommentedCsv, type PublishedGptShape } from './commentedCsv.js';

export interface MegatronSp22Row extends PublishedGptShape {
  globalBatch: number;
  microBatch: number;
  virtualStages: number;
  /** Published iteration time with full recomputation (no sequence parallelism), s. */
  fullRecomputeS: number;
  /** Published iteration time with sequence parallelism and selective recomputation, s. */
  presentWorkS: number;
}

/** The two ways each model was run. */
export const SP22_CONFIGS = ['full-recompute', 'sp-selective'] as const;
export type Sp22Config = (typeof SP22_CONFIGS)[number];

export const MEGATRON_SP22_VOCAB = 51200;
export const MEGATRON_SP22_SEQ = 2048;

export function parseMegatronSp22Csv(text: string): { source: string[]; rows: MegatronSp22Row[] } {
  const t = parseCommentedCsv(text, 'megatron-sp22 table');
  const rows = t.rows.map((v) => ({
    ...gptShapeOf(t, v),
    globalBatch: v[t.col('global_batch')],
    microBatch: v[t.col('micro_batch')],
    virtualStages: v[t.col('virtual_stages')],
    fullRecomputeS: v[t.col('full_recompute_s')],
    presentWorkS: v[t.col('present_work_s')],
  }));
  return { source: t.source, rows };
}

/** The published iteration time of a row in one configuration, s. */
export function publishedIterationS(row: MegatronSp22Row, config: Sp22Config): number {
  return config === 'full-recompute' ? row.fullRecomputeS : row.presentWorkS;
}

/** The scenario (raw, as a file would hold it) for a row in one configuration. */
export function megatronSp22Scenario(row: MegatronSp22Row, config: Sp22Config): Record<string, unknown> {
  const sp = config === 'sp-selective';
  return {
    name: `megatron-sp22-${row.paramsB}b-${config}`,
    cluster: { preset: 'dgx-a100-80gb', nodes: row.gpus / 8 },
    model: {
      arch: 'gpt',
      layers: row.layers,
      hidden: row.hidden,
      heads: row.heads,
      ffnHidden: 4 * row.hidden,
      seqLen: MEGATRON_SP22_SEQ,
      vocab: MEGATRON_SP22_VOCAB,
      tiedEmbeddings: true,
    },
    training: {
      globalBatch: row.globalBatch,
      microBatch: row.microBatch,
      precision: 'fp16',
      optimizer: 'adam',
      flashAttention: false,
    },
    parallel: {
      tp: row.tp,
      pp: row.pp,
      dp: 1,
      schedule: row.virtualStages > 1 ? 'interleaved' : '1f1b',
      virtualStages: row.virtualStages,
      sequenceParallel: sp,
      recompute: sp ? 'selective' : 'full',
    },
  };
}

export function megatronSp22Setup(
  row: MegatronSp22Row,
  config: Sp22Config,
  resolve: (raw: Record<string, unknown>, name: string, dir: string) => StepSetup,
): StepSetup {
  return resolve(megatronSp22Scenario(row, config), 'megatron-sp22', '.');
}

/**
 * Table 4 of the same paper: forward + backward time of one transformer layer of the 22B model (TP 8,
 * micro-batch 4), ms, for each technique.
 */
export const TABLE4_LAYER_MS = { none: 19.6, sp: 19.0, full: 27.2, selective: 20.9, 'selective+sp': 20.3 } as const;
export type Table4Experiment = keyof typeof TABLE4_LAYER_MS;
const TABLE4_SETTINGS: Record<
  Table4Experiment,
  { recompute: 'none' | 'full' | 'selective'; sequenceParallel: boolean }
> = {
  none: { recompute: 'none', sequenceParallel: false },
  sp: { recompute: 'none', sequenceParallel: true },
  full: { recompute: 'full', sequenceParallel: false },
  selective: { recompute: 'selective', sequenceParallel: false },
  'selective+sp': { recompute: 'selective', sequenceParallel: true },
};

/**
 * One layer's predicted time for each Table 4 experiment: a step of three layers minus a step of two of the
 * 22B row (one micro-batch of 4, as in Table 3). It includes the layer's share of the optimizer step, which
 * Table 4 does not.
 */
export function table4LayerMs(
  row22b: MegatronSp22Row,
  simulateMs: (setup: StepSetup) => number,
  resolve: (raw: Record<string, unknown>, name: string, dir: string) => StepSetup,
): Record<Table4Experiment, number> {
  const stepMs = (layers: number, e: Table4Experiment) => {
    const raw = megatronSp22Scenario({ ...row22b, layers }, 'full-recompute');
    return simulateMs(
      resolve(
        { ...raw, parallel: { ...(raw.parallel as object), ...TABLE4_SETTINGS[e] } },
        'megatron-sp22-table4',
        '.',
      ),
    );
  };
  const out = {} as Record<Table4Experiment, number>;
  for (const e of Object.keys(TABLE4_SETTINGS) as Table4Experiment[]) out[e] = stepMs(3, e) - stepMs(2, e);
  return out;
}
