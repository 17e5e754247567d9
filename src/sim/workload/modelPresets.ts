import { UnknownPresetError } from '../errors.js';
import type { ModelSpec } from './model.js';
import type { MoeSpec } from './moe.js';
import { GPT_OSS_LEFT_OUT } from './leftOut.js';

/**
 * A GPT-3-style decoder (GELU MLP of 4h, tied embeddings, GPT-2 BPE vocabulary of 50257, context 2048). Unpadded,
 * its LM head is a misaligned GEMM at tp 1 (kernelTime.ts); frameworks pad it (Megatron to 128 × tp).
 */
function gpt3(name: string, layers: number, hidden: number, heads: number): ModelSpec {
  return {
    name,
    arch: 'gpt',
    layers,
    hidden,
    heads,
    kvHeads: heads,
    ffnHidden: 4 * hidden,
    seqLen: 2048,
    vocab: 50257,
    tiedEmbeddings: true,
  };
}

/**
 * The GPT models of Narayanan et al., "Efficient Large-Scale Language Model Training on GPU Clusters
 * Using Megatron-LM" (SC21), Table 1: vocabulary 51200, sequence 2048. The table also gives the
 * measured TFLOP/s per A100, which makes these the natural validation targets.
 */
function megatronGpt(name: string, layers: number, hidden: number, heads: number): ModelSpec {
  return { ...gpt3(name, layers, hidden, heads), vocab: 51200 };
}

// eslint-disable-next-line max-params -- one preset row: the columns of the model paper's table, in its order
function llama(
  name: string,
  layers: number,
  hidden: number,
  heads: number,
  kvHeads: number,
  ffnHidden: number,
  seqLen: number,
  vocab: number,
): ModelSpec {
  return { name, arch: 'llama', layers, hidden, heads, kvHeads, ffnHidden, seqLen, vocab, tiedEmbeddings: false };
}

/** A Llama-shaped decoder whose MLPs are mixtures of experts (every layer; no shared experts unless given). */
function moeLlama(
  base: ModelSpec,
  moe: Pick<MoeSpec, 'experts' | 'topK' | 'expertFfnHidden'> & Partial<MoeSpec>,
  headDim?: number,
): ModelSpec {
  return {
    ...base,
    ...(headDim !== undefined ? { headDim } : {}),
    moe: { sharedExpertFfnHidden: 0, denseLayers: 0, ...moe },
  };
}

const PRESETS: readonly ModelSpec[] = [
  // Brown et al., "Language Models are Few-Shot Learners" (2020), Table 2.1. The table lists GPT-3 XL
  // with 24 heads of 128 (= 3072 ≠ d_model 2048) and GPT-3 13B with d_model 5140; we use 16 heads
  // (as GPT-Neo 1.3B does) and 5120 = 40 × 128 so that heads divide the width.
  gpt3('gpt3-1.3b', 24, 2048, 16),
  gpt3('gpt3-2.7b', 32, 2560, 32),
  gpt3('gpt3-6.7b', 32, 4096, 32),
  gpt3('gpt3-13b', 40, 5120, 40),
  gpt3('gpt3-175b', 96, 12288, 96),
  megatronGpt('megatron-gpt-1.7b', 24, 2304, 24),
  megatronGpt('megatron-gpt-18.4b', 40, 6144, 48),
  megatronGpt('megatron-gpt-145.6b', 80, 12288, 96),
  megatronGpt('megatron-gpt-1t', 128, 25600, 160),
  // Touvron et al., "Llama 2" (2023), Table 1 (context 4096); widths from the HF configs
  // meta-llama/Llama-2-{7b,13b,70b}-hf/config.json (vocab 32000, untied lm_head).
  llama('llama2-7b', 32, 4096, 32, 32, 11008, 4096, 32000),
  llama('llama2-13b', 40, 5120, 40, 40, 13824, 4096, 32000),
  llama('llama2-70b', 80, 8192, 64, 8, 28672, 4096, 32000),
  // Llama Team, "The Llama 3 Herd of Models" (2024), Table 3 (FFN 14336 / 28672 / 53248; 8 KV heads;
  // pre-training context 8192); vocab 128256 from meta-llama/Meta-Llama-3-8B and Llama-3.1-405B configs.
  llama('llama3-8b', 32, 4096, 32, 8, 14336, 8192, 128256),
  llama('llama3-70b', 80, 8192, 64, 8, 28672, 8192, 128256),
  llama('llama3-405b', 126, 16384, 128, 8, 53248, 8192, 128256),
  // Mixture-of-experts models (moe.ts). Jiang et al., "Mixtral of Experts" (2024), Table 1 and the HF configs
  // mistralai/Mixtral-8x7B-v0.1 and Mixtral-8x22B-v0.1/config.json: 8 experts, top 2, expert width = intermediate_size,
  // 32k context; 46.7B / 12.9B and 141B / 39B parameters, total / active (test/sim/workload/moePresets.test.ts).
  moeLlama(llama('mixtral-8x7b', 32, 4096, 32, 8, 14336, 32768, 32000), {
    experts: 8,
    topK: 2,
    expertFfnHidden: 14336,
  }),
  moeLlama(llama('mixtral-8x22b', 56, 6144, 48, 8, 16384, 65536, 32000), {
    experts: 8,
    topK: 2,
    expertFfnHidden: 16384,
  }),
  // Qwen Team, "Qwen3 Technical Report" (2025), Table 2, and Qwen/Qwen3-30B-A3B, Qwen3-235B-A22B config.json:
  // 128 experts, top 8, no shared experts, head_dim 128, moe_intermediate_size 768 / 1536, vocab 151936, untied;
  // 30.5B / 3.3B and 235B / 22B. Qwen3's per-head q/k RMSNorms (2 × 128 weights a layer) are left out.
  moeLlama(
    llama('qwen3-30b-a3b', 48, 2048, 32, 4, 6144, 32768, 151936),
    { experts: 128, topK: 8, expertFfnHidden: 768 },
    128,
  ),
  moeLlama(
    llama('qwen3-235b-a22b', 94, 4096, 64, 4, 12288, 32768, 151936),
    { experts: 128, topK: 8, expertFfnHidden: 1536 },
    128,
  ),
  // DeepSeek-AI, "DeepSeek-V3 Technical Report" (arXiv 2412.19437) §2 and 4.2, and deepseek-ai/DeepSeek-V3
  // config.json: 61 layers, width 7168, 128 heads of latent attention (q_lora_rank 1536, kv_lora_rank 512, qk 128 + 64
  // rotary, v 128), the first 3 layers dense (18432), then 256 routed experts of 2048, top 8, and one shared expert;
  // vocab 129280, untied; 671B parameters, 37B active; node-limited routing over 8 groups, 4 a token (n_group,
  // topk_group); one multi-token-prediction module (num_nextn_predict_layers 1; §2.2: 14B with its embedding and head).
  {
    ...moeLlama(llama('deepseek-v3', 61, 7168, 128, 128, 18432, 4096, 129280), {
      experts: 256,
      topK: 8,
      expertFfnHidden: 2048,
      sharedExpertFfnHidden: 2048,
      denseLayers: 3,
      routingGroups: 8,
      groupsPerToken: 4,
    }),
    mla: { qLoraRank: 1536, kvLoraRank: 512, qkNopeHeadDim: 128, qkRopeHeadDim: 64, vHeadDim: 128 },
    mtpLayers: 1,
  },
  // Qwen Team, "Qwen2 Technical Report" (2024), Table 1, and Qwen/Qwen2-57B-A14B config.json: 28 layers, width 3584,
  // 28 query and 4 KV heads, 64 experts of 2560, top 8, a shared expert of 20480, vocab 151936, untied; 57B / 14B.
  // Left out: the QKV biases and the shared expert's sigmoid gate (a few thousand weights a layer).
  moeLlama(llama('qwen2-57b-a14b', 28, 3584, 28, 4, 18944, 32768, 151936), {
    experts: 64,
    topK: 8,
    expertFfnHidden: 2560,
    sharedExpertFfnHidden: 20480,
  }),
  // OpenAI, "gpt-oss-120b & gpt-oss-20b Model Card" (2025) and openai/gpt-oss-120b config.json: 36 layers, width 2880,
  // 64 query and 8 KV heads of 64, 128 experts, top 4, expert width 2880, vocab 201088, untied (sequence 4096 is a
  // default here; the card gives no pre-training length); 116.8B total, 5.1B active
  // (the card's active count leaves the input embedding out). Not modelled: its attention biases and sinks, and the
  // 128-token banded attention of every other layer (counted as full attention, so attention is over-counted).
  {
    ...moeLlama(
      llama('gpt-oss-120b', 36, 2880, 64, 8, 2880, 4096, 201088),
      { experts: 128, topK: 4, expertFfnHidden: 2880 },
      64,
    ),
    notModelled: [GPT_OSS_LEFT_OUT],
  },
  // Devlin et al., "BERT" (2019): BERT-Large L=24, H=1024, A=16, FFN 4H, 512 positions;
  // HF bert-large-uncased config: vocab 30522, MLM decoder tied to the word embeddings. 30522 is not a multiple
  // of 8, so the decoder GEMMs take cuBLAS's slow path (kernelTime.ts); NVIDIA's own BERT pads it to 30528.
  {
    name: 'bert-large',
    arch: 'bert',
    layers: 24,
    hidden: 1024,
    heads: 16,
    kvHeads: 16,
    ffnHidden: 4096,
    seqLen: 512,
    vocab: 30522,
    tiedEmbeddings: true,
  },
  // A small classifier for quick tests: 1024 → 512 → 10 (ReLU between).
  {
    name: 'mlp-small',
    arch: 'mlp',
    layers: 2,
    hidden: 1024,
    heads: 1,
    kvHeads: 1,
    ffnHidden: 512,
    seqLen: 1,
    vocab: 10,
    tiedEmbeddings: false,
    mlpSizes: [1024, 512, 10],
  },
];

/** Names accepted by {@link modelPreset}. */
export const MODEL_PRESET_NAMES: readonly string[] = PRESETS.map((p) => p.name);

/**
 * The model preset called `name` (a fresh copy).
 * @throws UnknownPresetError listing the allowed names.
 */
export function modelPreset(name: string, path = 'model'): ModelSpec {
  const found = PRESETS.find((p) => p.name === name);
  if (!found) throw new UnknownPresetError('model', name, MODEL_PRESET_NAMES, path);
  const copy: ModelSpec = { ...found };
  if (found.mlpSizes) copy.mlpSizes = [...found.mlpSizes];
  if (found.moe) copy.moe = { ...found.moe };
  if (found.mla) copy.mla = { ...found.mla };
  if (found.notModelled) copy.notModelled = [...found.notModelled];
  return copy;
}

/** Names accepted by {@link modelPreset} (function form, like the hardware presets' `gpuPresetNames`). */
export function modelPresetNames(): string[] {
  return [...MODEL_PRESET_NAMES];
}
