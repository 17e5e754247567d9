/**
 * The peer measurement set (VIA-Research/vTrain, `data/ground_truth_{single,multi}.csv`, collected with
 * Megatron-DeepSpeed on A100 nodes; see test/validation/SOURCE.md) turned into scenarios.
 *
 * What is known of their setup and how it maps (no constant here is fitted to a row):
 * - A100 SXM, 8 per node behind NVSwitch (their intra-node all-reduce table peaks near 229 GB/s busbw,
 *   which is the dgx-a100-80gb preset); memory size is not stated and does not affect time. Those
 *   published nccl-tests tables (2, 4, 8 GPUs) are the node's measured all-reduce (`comm.measured`).
 * - 800 Gb/s of InfiniBand per node: 4 × HDR 200 Gb/s NICs.
 * - fp16 mixed precision, full activation recomputation, 1F1B, the data-parallel gradient all-reduce
 *   after backward (not overlapped); Megatron's local DDP reduces its one contiguous gradient buffer,
 *   so one bucket.
 * - Megatron's GPT: GELU MLP of 4h, learned positions; the vocabulary per TP rank as the peer's own model
 *   shards it (`VtrainVocab`); attention is Megatron's fused softmax, not flash attention (2022-era code).
 */

import { fileURLToPath } from 'node:url';
import type { StepSetup } from '../sim/setup.js';
import { padVocab } from '../sim/workload/framework.js';

export interface VtrainRow {
  group: 'single' | 'multi';
  /** Billions of parameters (multi-node file only). */
  paramsB?: number;
  gpus: number;
  globalBatch: number;
  microBatch: number;
  hidden: number;
  heads: number;
  layers: number;
  seqLen: number;
  tp: number;
  dp: number;
  pp: number;
  measuredMs: number;
}

/** Parses one of the CSV files (UTF-8 with BOM, CRLF). */
export function parseVtrainCsv(text: string, group: 'single' | 'multi'): VtrainRow[] {
  const lines = text
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .filter((l) => l.trim() !== '');
  const rows: VtrainRow[] = [];
  for (const line of lines.slice(1)) {
    const v = line.split(',').map(Number);
    const f = group === 'multi' ? v.slice(1) : v;
    rows.push({
      group,
      paramsB: group === 'multi' ? v[0] : undefined,
      gpus: f[0],
      globalBatch: f[1],
      microBatch: f[2],
      hidden: f[3],
      heads: f[4],
      layers: f[5],
      seqLen: f[6],
      tp: f[7],
      dp: f[8],
      pp: f[9],
      measuredMs: f[10],
    });
  }
  return rows;
}

/** GPT-2's BPE vocabulary, which both Megatron-DeepSpeed's GPT and the peer's own model definition use. */
export const GPT2_VOCAB = 50257;

/**
 * How each tensor-parallel rank's share of the vocabulary is taken:
 * - `peer` (default, a hypothesis): as the peer repository's own (profiling) GPT definition shards it,
 *   `vocab_size // tp` rows per rank with vocab_size = 50,257 (src/model/gpt_modeling.py
 *   `nn.Embedding(vocab_size // world_size, ...)`, the same in src/predictor.py's parameter list): 50,257 rows at
 *   tp 1 (odd), 25,128 at tp 2 (a multiple of 8), 12,564 at tp 4 and 6,282 at tp 8. Unaligned LM-head GEMMs run
 *   on cuBLAS's slow path (kernelTime.ts).
 * - `megatron-padded`: Megatron's default padding to a multiple of 128 × tp (every rank aligned), what the
 *   measured system (Megatron-DeepSpeed) does.
 * The measured per-micro-batch times follow the first one's alignment pattern, which the second cannot produce,
 * and the published times are exact sums of per-part measurements, so a part profiled on the peer's model can be
 * in them (reports/validation/LOG.md, session 5); both figures are reported.
 */
export type VtrainVocab = 'peer' | 'megatron-padded';
export const VTRAIN_VOCABS: readonly VtrainVocab[] = ['peer', 'megatron-padded'];

/** The model's whole vocabulary (tp × the rows each rank holds) under a vocabulary choice. */
export function vtrainVocab(tp: number, vocab: VtrainVocab): number {
  return vocab === 'peer' ? tp * Math.floor(GPT2_VOCAB / tp) : padVocab(GPT2_VOCAB, tp);
}

/** Options of a row's scenario: sensitivity runs of `npm run validate`. */
export interface VtrainScenarioOptions {
  /** Host cost per framework call, µs (`--host-op-us`); absent: the framework's cited one. */
  hostOpUs?: number;
  /**
   * Host cost per torch.distributed collective call, µs (`--host-collective-us`); absent: the framework's cited one.
   */
  hostCollectiveUs?: number;
  /** Per-rank vocabulary (`--vocab`); absent: `peer`. */
  vocab?: VtrainVocab;
}

/** GPU counts of the published nccl-tests all-reduce tables of the measurement node (test/validation/SOURCE.md). */
const VTRAIN_ALLREDUCE_RANKS = [2, 4, 8];

/** The folder of the validation data; the scenarios' measured tables are relative to it. */
export const VTRAIN_DATA_DIR = fileURLToPath(new URL('../../test/validation/', import.meta.url));

/** The scenario (raw, as a file would hold it) that reproduces a row's setup. */
export function vtrainScenario(row: VtrainRow, opts: VtrainScenarioOptions = {}): Record<string, unknown> {
  const { hostOpUs, hostCollectiveUs } = opts;
  const perNode = Math.min(8, row.gpus);
  return {
    name:
      `vtrain-${row.group}-${row.gpus}gpu-h${row.hidden}-l${row.layers}` +
      `-tp${row.tp}-pp${row.pp}-dp${row.dp}-mb${row.microBatch}`,
    cluster: {
      preset: 'dgx-a100-80gb',
      nodes: Math.max(1, row.gpus / 8),
      node: { gpusPerNode: perNode, nicsPerNode: Math.min(4, perNode) },
    },
    model: {
      arch: 'gpt',
      layers: row.layers,
      hidden: row.hidden,
      heads: row.heads,
      ffnHidden: 4 * row.hidden,
      seqLen: row.seqLen,
      vocab: vtrainVocab(row.tp, opts.vocab ?? 'peer'),
      tiedEmbeddings: true,
    },
    // The split is given whole (`vtrainVocab`): the framework's own padding is off.
    training: {
      globalBatch: row.globalBatch,
      microBatch: row.microBatch,
      precision: 'fp16',
      optimizer: 'adam',
      flashAttention: false,
      framework: 'megatron-deepspeed',
      vocabDivisibleBy: 1,
      ...(hostOpUs === undefined ? {} : { hostOpUs }),
      ...(hostCollectiveUs === undefined ? {} : { hostCollectiveUs }),
    },
    parallel: {
      tp: row.tp,
      pp: row.pp,
      dp: row.dp,
      schedule: '1f1b',
      recompute: 'full',
      ddp: { bucketMB: 1e6, overlap: false },
    },
    comm: {
      measured: VTRAIN_ALLREDUCE_RANKS.map((n) => ({
        op: 'all_reduce',
        ranks: n,
        file: `vtrain-a100-allreduce/AR_GPU${n}_1M_1024M_LUT.csv`,
      })),
    },
  };
}

/**
 * The step setup of a row: its scenario resolved. The scenario selects the framework the measurements were
 * taken with (`training.framework: megatron-deepspeed`, framework.ts) so that host costs and its kernel
 * sequence are modelled.
 */
export function vtrainSetup(
  row: VtrainRow,
  resolve: (raw: Record<string, unknown>, name: string, dir: string) => StepSetup,
  opts: VtrainScenarioOptions = {},
): StepSetup {
  return resolve(vtrainScenario(row, opts), 'vtrain', VTRAIN_DATA_DIR);
}

/** Mean absolute percentage error. */
export function mape(pairs: readonly { predicted: number; measured: number }[]): number {
  if (pairs.length === 0) return NaN;
  return (100 * pairs.reduce((a, p) => a + Math.abs(p.predicted - p.measured) / p.measured, 0)) / pairs.length;
}

/** Mean of signed errors in percent (the bias that MAPE hides). */
export function meanSignedErrorPct(items: readonly { errorPct: number }[]): number {
  return items.reduce((a, o) => a + o.errorPct, 0) / items.length;
}
