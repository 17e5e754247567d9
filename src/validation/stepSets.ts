import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { applyOverrides, loadScenarioFile } from '../scenario/load.js';
import { resolveScenario } from '../scenario/resolve.js';
import { parseVtrainCsv, VTRAIN_DATA_DIR, vtrainScenario, type VtrainRow } from './vtrain.js';
import {
  megatronFlopsPerIteration,
  MEGATRON_SC21_SEQ,
  MEGATRON_SC21_VOCAB,
  megatronSc21Scenario,
  parseMegatronSc21Csv,
} from './megatronSc21.js';
import { megatronSp22Scenario, parseMegatronSp22Csv, publishedIterationS, SP22_CONFIGS } from './megatronSp22.js';
import type { AttentionKernel } from '../sim/workload/attentionKernels.js';
import { csvRecords, dataFile } from './dataFiles.js';
import { deepspeedAzureTasks } from './deepspeedAzure.js';
import { moeFoldingTasks } from './moeFolding.js';

/**
 * Every published set of measured training-step times as one list of tasks: the scenario that reproduces a row,
 * its measured step time, and the group of rows that are alternatives to one another (the same model, GPU count and
 * batch run with other splits), so that `npm run validate -- --all` can predict them on one pool of threads, print
 * each set's error and ranking quality, and write the residuals the error bands rest on (src/accuracy).
 */

export const STEP_SETS = [
  'vtrain-single',
  'vtrain-multi',
  'megatron-sc21',
  'megatron-sp22',
  'nemo-dgxc-h100',
  'nemo-dgxc-h100-fp8',
  'nemo-dgxc-gb200',
  'nemo-dgxc-gb200-fp8',
  'fms-fsdp-a100',
  'llm-foundry-fsdp',
  'deepspeed-azure-zero3',
  'moe-folding-h100',
] as const;
export type StepSetName = (typeof STEP_SETS)[number];

/** One measured row to predict: plain data, so that it crosses to a worker thread. */
export interface StepTask {
  set: StepSetName;
  label: string;
  /** Rows with the same group are the same job run with other splits (ranking.ts). */
  rankGroup?: string;
  measuredS: number;
  /** The scenario, as a file would hold it, and the folder its relative paths start in. */
  raw: Record<string, unknown>;
  baseDir: string;
}

/** What each set is, for the tables. */
export const STEP_SET_DESCRIPTIONS: Record<StepSetName, string> = {
  'vtrain-single': "Megatron-DeepSpeed GPT, 2-8 A100 in one node (vTrain, MICRO'24)",
  'vtrain-multi': "Megatron-DeepSpeed GPT 3.6B-175B, 64-512 A100 (vTrain, MICRO'24)",
  'megatron-sc21': 'Megatron-LM GPT 1.7B-1T, 32-3,072 A100 (Narayanan et al. SC21, Table 1)',
  'megatron-sp22': 'Megatron-LM GPT 22B-1T, TP 8, no DP, A100 (Korthikanti et al. 2022, Table 5)',
  'nemo-dgxc-h100': 'NeMo Nemotron-4 and Llama 3.1, 8-2,048 H100 (NVIDIA DGX Cloud recipes)',
  'nemo-dgxc-h100-fp8': 'the same runs in FP8 (delayed scaling, FP8 parameter gather; DGX Cloud recipes)',
  'nemo-dgxc-gb200': 'NeMo 2 Llama 3.1 405B and Nemotron-4 340B, 128-512 GB200 NVL72 (DGX Cloud recipes v25.05)',
  'nemo-dgxc-gb200-fp8': 'the same GB200 runs in FP8 (delayed scaling, FP8 parameter gather)',
  'fms-fsdp-a100': 'PyTorch FSDP Llama-2 7B-70B, 128 A100 (IBM fms-fsdp)',
  'llm-foundry-fsdp': 'Composer/PyTorch FSDP MPT 125M-70B, 8-512 A100 and H100 (llm-foundry)',
  'deepspeed-azure-zero3': 'DeepSpeed ZeRO-3 GPT-3 175B, no TP or PP, 128-1,024 A100 (DeepSpeed on Azure, 2022)',
  'moe-folding-h100': 'Megatron-Core MoE: Mixtral 8x22B, Qwen2-57B-A14B, 64-1,024 H100 (MoE Parallel Folding, 2025)',
};

const CHECKS_DIR = fileURLToPath(new URL('../../scenarios/checks/', import.meta.url));

function vtrainTasks(group: 'single' | 'multi', limit: number): StepTask[] {
  const rows = parseVtrainCsv(readFileSync(dataFile(`vtrain-${group}-node.csv`), 'utf8'), group).slice(0, limit);
  const label = (r: VtrainRow) =>
    `${r.gpus} GPUs h${r.hidden} l${r.layers} tp${r.tp} pp${r.pp} dp${r.dp} mb${r.microBatch} gb${r.globalBatch}`;
  return rows.map((r) => ({
    set: `vtrain-${group}`,
    label: label(r),
    rankGroup: `h${r.hidden} a${r.heads} l${r.layers} s${r.seqLen} ${r.gpus} GPUs gb${r.globalBatch}`,
    measuredS: r.measuredMs / 1e3,
    raw: vtrainScenario(r),
    baseDir: VTRAIN_DATA_DIR,
  }));
}

function sc21Tasks(limit: number): StepTask[] {
  return parseMegatronSc21Csv(readFileSync(dataFile('megatron-sc21-table1.csv'), 'utf8'))
    .rows.slice(0, limit)
    .map((r) => ({
      set: 'megatron-sc21',
      label: `${r.paramsB}B on ${r.gpus} GPUs tp${r.tp} pp${r.pp}`,
      // The paper's Eq. 3 FLOPs over the published TFLOP/s per GPU: the measured step time.
      measuredS:
        megatronFlopsPerIteration(r.batch, MEGATRON_SC21_SEQ, r.layers, r.hidden, MEGATRON_SC21_VOCAB) /
        (r.tflopsPerGpu * 1e12 * r.gpus),
      raw: megatronSc21Scenario(r),
      baseDir: '.',
    }));
}

function sp22Tasks(limit: number): StepTask[] {
  return parseMegatronSp22Csv(readFileSync(dataFile('megatron-sp22-table5.csv'), 'utf8'))
    .rows.slice(0, limit)
    .flatMap((r) =>
      SP22_CONFIGS.map((config) => ({
        set: 'megatron-sp22' as const,
        label: `${r.paramsB}B ${config}`,
        rankGroup: `${r.paramsB}B`,
        measuredS: publishedIterationS(r, config),
        raw: megatronSp22Scenario(r, config),
        baseDir: '.',
      })),
    );
}

/** The rows of a data file with text columns (`#` comment lines, a header, then rows), each by its header's names. */
type CheckSet = 'nemo-dgxc-h100' | 'nemo-dgxc-h100-fp8' | 'nemo-dgxc-gb200' | 'nemo-dgxc-gb200-fp8' | 'fms-fsdp-a100';

/**
 * What a set changes in its scenarios: the FP8 runs of the DGX Cloud recipes (v24.11.1-v25.03, NeMo 1.0) set
 * `fp8_hybrid` with per-tensor delayed scaling and `+model.fp8_params` (configure.sh), the FP8 parameter gather;
 * NeMo 2's on GB200 (v25.05) `bf16_with_fp8_mixed`: the same, and gradients reduced in bf16 (grad_reduce_in_fp32 off).
 */
const CHECK_SET_OVERRIDES: Record<CheckSet, string[]> = {
  'nemo-dgxc-h100': [],
  'nemo-dgxc-h100-fp8': ['training.precision=fp8', 'training.fp8.recipe=delayed', 'training.fp8.paramGather=true'],
  'nemo-dgxc-gb200': [],
  'nemo-dgxc-gb200-fp8': [
    'training.precision=fp8',
    'training.fp8.recipe=delayed',
    'training.fp8.paramGather=true',
    'parallel.fp32Gradients=false',
  ],
  'fms-fsdp-a100': [],
};

/** The runs of the scenarios in scenarios/checks/ (test/validation/published-checks.csv). */
function checkTasks(set: CheckSet, limit: number): StepTask[] {
  const rows = csvRecords('published-checks.csv').filter((r) => r.set === set);
  const tasks = rows
    .slice(0, limit)
    .map(({ scenario: file, nodes, global_batch: globalBatch, tokens_per_s_per_gpu: tokensPerSPerGpu }) => {
      const raw = applyOverrides(loadScenarioFile(`${CHECKS_DIR}${file}`).raw, [
        `cluster.nodes=${nodes}`,
        `training.globalBatch=${globalBatch}`,
        ...CHECK_SET_OVERRIDES[set],
      ]) as Record<string, unknown>;
      const setup = resolveScenario(raw, file, CHECKS_DIR);
      const gpus = setup.parallel.tp * setup.parallel.pp * setup.parallel.dp * (setup.parallel.cp ?? 1);
      return {
        set,
        label: `${file.replace(/\.yaml$/, '')} on ${gpus} GPUs`,
        globalBatch,
        measuredS: (Number(globalBatch) * setup.training.seqLen) / (Number(tokensPerSPerGpu) * gpus),
        raw,
        baseDir: CHECKS_DIR,
      };
    });
  // A scenario run twice on one GPU count (weak and strong scaling) is told apart by its batch.
  const seen = (label: string) => tasks.filter((t) => t.label === label).length;
  return tasks.map(({ globalBatch, ...t }) =>
    seen(t.label) > 1 ? { ...t, label: `${t.label}, global batch ${globalBatch}` } : t,
  );
}

/**
 * The llm-foundry benchmark tables (test/validation/llm-foundry-fsdp.csv): MPT models trained with Composer's FSDP.
 * How a row becomes a scenario (nothing fitted to a row):
 * - the row's node preset, nodes = GPUs / 8; the A100 tables' "1600 Gbps node-node interconnect (RoCE)" as eight
 *   200 Gb/s RoCE NICs per node (the roce-400 preset at 200 Gb/s); the H100 tables name no network, so the dgx-h100
 *   preset's eight NDR InfiniBand NICs stand in (an assumption);
 * - a GPT of the row's shape (FFN 4h, vocabulary 50,368, tied embeddings) with the attention kernel the row's
 *   `attn_impl` names (Triton's FlashAttention for the 2023 tables, FlashAttention-2 where the 2024 sweep asked for
 *   it) and fused element-wise kernels: MPT's loss is flash-attn's fused cross-entropy (`loss_fn` defaults to
 *   `fused_crossentropy` in modeling_mpt.py at v0.3.0 and at 5e85bd62: flash_attn.losses.cross_entropy), and its
 *   attention splits heads with views, not the copies eager Hugging Face layers make;
 * - FULL_SHARD as ZeRO-3 over every GPU; Composer's DEFAULT mixed precision reduces gradients in fp32 (PURE: bf16);
 *   activation checkpointing as full recompute. SHARD_GRAD_OP rows (6 of 209) are left out: FSDP's ZeRO-2 keeps the
 *   weights sharded outside forward and backward, which clustersim's ZeRO-2 (DeepSpeed's) does not model.
 */
/** MPT's `attn_config.attn_impl` as the kernel it runs: `flash` is the flash-attn package's FlashAttention-2. */
const ATTENTION_OF_MPT_IMPL: Record<string, AttentionKernel> = { triton: 'triton', flash: 'fa2' };

function mptAttentionKernel(attnImpl: string): AttentionKernel {
  const kernel = ATTENTION_OF_MPT_IMPL[attnImpl];
  if (!kernel)
    throw new Error(
      `llm-foundry-fsdp.csv: attn_impl ${attnImpl} is not one of ${Object.keys(ATTENTION_OF_MPT_IMPL).join(', ')}`,
    );
  return kernel;
}

function llmFoundryTasks(limit: number): StepTask[] {
  return csvRecords('llm-foundry-fsdp.csv')
    .filter((r) => r.sharding === 'FULL_SHARD')
    .slice(0, limit)
    .map((r) => {
      const [gpus, seq, hidden] = [Number(r.gpus), Number(r.seq_len), Number(r.hidden)];
      const a100 = r.node.startsWith('dgx-a100');
      return {
        set: 'llm-foundry-fsdp' as const,
        label:
          `${r.model} seq ${seq} on ${gpus} ${a100 ? 'A100' : 'H100'} ` +
          `mb${r.micro_batch} gb${r.global_batch}${r.act_ckpt === 'true' ? ' ckpt' : ''}`,
        measuredS: (Number(r.global_batch) * seq) / (Number(r.tokens_per_s_per_gpu) * gpus),
        raw: {
          name: `llm-foundry-${r.model}-${gpus}gpu-seq${seq}`,
          cluster: {
            preset: r.node,
            nodes: gpus / 8,
            ...(a100 ? { network: { preset: 'roce-400', linkGbps: 200 } } : {}),
          },
          model: {
            arch: 'gpt',
            layers: Number(r.layers),
            hidden,
            heads: Number(r.heads),
            ffnHidden: 4 * hidden,
            seqLen: seq,
            vocab: 50368,
            tiedEmbeddings: true,
          },
          training: {
            globalBatch: Number(r.global_batch),
            microBatch: Number(r.micro_batch),
            precision: 'bf16',
            optimizer: 'adam',
            flashAttention: true,
            attentionKernel: mptAttentionKernel(r.attn_impl),
            kernels: 'fused',
          },
          parallel: {
            tp: 1,
            pp: 1,
            dp: gpus,
            zero: 3,
            recompute: r.act_ckpt === 'true' ? 'full' : 'none',
            fp32Reduction: r.mp_mode === 'DEFAULT',
          },
        },
        baseDir: '.',
      };
    });
}

/** The tasks of the named sets, the first `limit` rows of each. */
export function stepTasks(sets: readonly StepSetName[], limit = Infinity): StepTask[] {
  const of: Record<StepSetName, () => StepTask[]> = {
    'vtrain-single': () => vtrainTasks('single', limit),
    'vtrain-multi': () => vtrainTasks('multi', limit),
    'megatron-sc21': () => sc21Tasks(limit),
    'megatron-sp22': () => sp22Tasks(limit),
    'nemo-dgxc-h100': () => checkTasks('nemo-dgxc-h100', limit),
    'nemo-dgxc-h100-fp8': () => checkTasks('nemo-dgxc-h100-fp8', limit),
    'nemo-dgxc-gb200': () => checkTasks('nemo-dgxc-gb200', limit),
    'nemo-dgxc-gb200-fp8': () => checkTasks('nemo-dgxc-gb200-fp8', limit),
    'fms-fsdp-a100': () => checkTasks('fms-fsdp-a100', limit),
    'llm-foundry-fsdp': () => llmFoundryTasks(limit),
    'deepspeed-azure-zero3': () => deepspeedAzureTasks(limit),
    'moe-folding-h100': () => moeFoldingTasks(limit),
  };
  return sets.flatMap((s) => of[s]());
}
