import { withPlainHeadDim, type ModelArch, type ModelSpec } from './model.js';
import { HF_MOE_TYPES, hfMoe } from './hfMoeConfig.js';
import { HF_DEEPSEEK_TYPES, hfDeepseek, type DeepseekParts } from './hfDeepseekConfig.js';
import { fail, intField, type Json } from './hfFields.js';
import { GPT_OSS_LEFT_OUT } from './leftOut.js';

/**
 * Reading a Hugging Face `config.json` into a {@link ModelSpec}. The caller reads the file (nothing in
 * `src/sim` touches the file system) and passes the parsed JSON plus the path for error messages.
 *
 * Field names per `transformers` configuration classes: LlamaConfig / MistralConfig / GPTNeoXConfig /
 * BertConfig use `num_hidden_layers`, `hidden_size`, `num_attention_heads`, `intermediate_size`,
 * `max_position_embeddings`; GPT2Config uses `n_layer`, `n_embd`, `n_head`, `n_inner` (null → 4·n_embd)
 * and `n_positions`. DeepseekV2Config / DeepseekV3Config add latent attention and experts (hfDeepseekConfig.ts).
 */

/** Supported `model_type` values and the architecture each maps to. */
const MODEL_TYPES: Record<string, ModelArch> = {
  llama: 'llama',
  mistral: 'llama', // Same block as Llama (RMSNorm, SwiGLU, GQA); sliding-window attention is ignored.
  // Qwen2 adds biases to q, k and v, Qwen3 a per-head RMSNorm of q and k, Gemma a GELU gate (GeGLU) and a scaled
  // embedding: each a few thousand parameters or element-wise passes per layer beside Llama's block, left out.
  qwen2: 'llama',
  qwen3: 'llama',
  gemma: 'llama',
  gpt2: 'gpt',
  // GPT-NeoX uses rotary positions (no learned position table), a parallel residual and an untied
  // `embed_out`; mapped to `gpt`, so the parameter count carries a spurious seqLen·hidden position table.
  gpt_neox: 'gpt',
  bert: 'bert',
  // Llama-shaped blocks whose MLPs are mixtures of experts (hfMoeConfig.ts). GPT-OSS's attention biases and sinks and
  // its banded attention on every other layer are left out.
  ...Object.fromEntries(HF_MOE_TYPES.map((t) => [t, 'llama' as const])),
  // Llama-shaped blocks with latent attention in place of the projections, and experts (hfDeepseekConfig.ts).
  ...Object.fromEntries(HF_DEEPSEEK_TYPES.map((t) => [t, 'llama' as const])),
};

/** `tie_word_embeddings` defaults of each configuration class when the field is absent. */
const TIE_DEFAULTS: Record<string, boolean> = {
  llama: false,
  mistral: false,
  qwen2: false,
  qwen3: false,
  gemma: true,
  gpt2: true,
  gpt_neox: false,
  bert: true,
  mixtral: false,
  qwen2_moe: false,
  qwen3_moe: false,
  gpt_oss: false,
  deepseek_v2: false,
  deepseek_v3: false,
};

/** Last path component without extension, or the parent folder for `…/config.json`. */
function nameFromPath(sourcePath: string): string {
  const parts = sourcePath.split(/[\\/]/).filter((p) => p.length > 0);
  let last = parts[parts.length - 1] ?? 'hf-model';
  if (last === 'config.json' && parts.length > 1) last = parts[parts.length - 2];
  return last.replace(/\.json$/i, '');
}

/** The config's `model_type` and the architecture it maps to. @throws ScenarioError when it is missing or not read */
function modelTypeOf(cfg: Json, sourcePath: string): { modelType: string; arch: ModelArch } {
  const modelType = cfg['model_type'];
  if (typeof modelType !== 'string') {
    fail(sourcePath, `missing field 'model_type'; expected one of: ${Object.keys(MODEL_TYPES).join(', ')}`);
  }
  const arch = MODEL_TYPES[modelType];
  if (!arch) {
    fail(
      sourcePath,
      `model_type '${modelType}' is not supported; expected one of: ${Object.keys(MODEL_TYPES).join(', ')}`,
    );
  }
  return { modelType, arch };
}

/**
 * Builds a model from a parsed Hugging Face `config.json`.
 *
 * `seqLen` is the maximum position count (`max_position_embeddings` / `n_positions`), which is an upper
 * bound on the training sequence: scenarios usually set a shorter one.
 * @param json the parsed file content
 * @param sourcePath where it came from, used as the error path
 * @throws ScenarioError naming the missing or invalid field
 */
export function modelFromHfConfig(json: unknown, sourcePath: string): ModelSpec {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    fail(sourcePath, 'expected a JSON object (a Hugging Face config.json)');
  }
  const cfg = json as Json;
  const { modelType, arch } = modelTypeOf(cfg, sourcePath);

  const layers = intField(cfg, ['num_hidden_layers', 'n_layer'], sourcePath);
  const hidden = intField(cfg, ['hidden_size', 'n_embd'], sourcePath);
  const heads = intField(cfg, ['num_attention_heads', 'n_head'], sourcePath);
  const deepseek = deepseekPartsOf(cfg, modelType, sourcePath);
  // Latent attention gives every head its own key and value (DeepseekV2/V3Config keep num_key_value_heads = heads).
  const kvHeads = deepseek ? heads : intField(cfg, ['num_key_value_heads'], sourcePath, heads);
  const moe = (HF_MOE_TYPES as readonly string[]).includes(modelType)
    ? hfMoe(cfg, modelType, sourcePath)
    : deepseek?.moe;
  // GPT-2 leaves n_inner null and uses 4·n_embd; the other families must state the width.
  const ffnHidden = intField(
    cfg,
    ['intermediate_size', 'n_inner'],
    sourcePath,
    arch === 'gpt' ? 4 * hidden : undefined,
  );
  const seqLen = intField(cfg, ['max_position_embeddings', 'n_positions'], sourcePath);
  const vocab = intField(cfg, ['vocab_size'], sourcePath);

  const tie = cfg['tie_word_embeddings'];
  if (tie !== undefined && typeof tie !== 'boolean') {
    fail(sourcePath, `field 'tie_word_embeddings' is ${JSON.stringify(tie)}; expected true or false`);
  }
  const tiedEmbeddings = typeof tie === 'boolean' ? tie : TIE_DEFAULTS[modelType];

  // LlamaConfig, MistralConfig, Qwen3Config and GemmaConfig take head_dim (default hidden / heads). Mistral NeMo's is
  // 128 beside 5120 / 32 = 160 (q_proj 5120 → 4096), Gemma 7B's 256 beside 3072 / 16, Qwen3-32B's 128 beside 5120 / 64.
  // DeepseekV2/V3Config set head_dim to the rotary part's width: latent attention's widths are its own (mla.ts).
  const headDim =
    cfg['head_dim'] === undefined || cfg['head_dim'] === null || deepseek
      ? undefined
      : intField(cfg, ['head_dim'], sourcePath);
  if (headDim === undefined && !deepseek && hidden % heads !== 0) {
    const noHeadDim = 'no head_dim says how wide a head is';
    fail(sourcePath, `hidden size ${hidden} is not a multiple of the attention heads (${heads}), and ${noHeadDim}`);
  }
  if (heads % kvHeads !== 0) {
    fail(sourcePath, `num_key_value_heads (${kvHeads}) does not divide num_attention_heads (${heads})`);
  }

  const nameField = cfg['_name_or_path'];
  const name = typeof nameField === 'string' && nameField.length > 0 ? nameField : nameFromPath(sourcePath);
  return withPlainHeadDim({
    name,
    arch,
    layers,
    hidden,
    heads,
    kvHeads,
    ...(headDim !== undefined ? { headDim } : {}),
    ffnHidden,
    seqLen,
    vocab,
    tiedEmbeddings,
    ...(moe ? { moe } : {}),
    ...(deepseek ? { mla: deepseek.mla } : {}),
    ...(deepseek?.mtpLayers ? { mtpLayers: deepseek.mtpLayers } : {}),
    ...(modelType === 'gpt_oss' ? { notModelled: [GPT_OSS_LEFT_OUT] } : {}),
  });
}

function deepseekPartsOf(cfg: Json, modelType: string, sourcePath: string): DeepseekParts | undefined {
  const type = HF_DEEPSEEK_TYPES.find((t) => t === modelType);
  return type ? hfDeepseek(cfg, type, sourcePath) : undefined;
}
