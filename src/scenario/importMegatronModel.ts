import { ScenarioError } from '../sim/errors.js';
import { MEGATRON_VOCAB_DIVISIBLE_BY, padVocab } from '../sim/workload/framework.js';
import type { ImportCollector } from './importResult.js';
import { SOURCE, type MegatronArgs } from './importMegatronFlags.js';

/** The model section of a Megatron-LM command line: sizes, architecture switches and the padded vocabulary. */
export function importModel(c: ImportCollector, a: MegatronArgs, tp: number): void {
  const has = (f: string) => a.has(f);
  const int = (f: string) => a.int(f);
  const pick = (f: string) => a.pick(f);
  const flagText = (f: string) => a.shown(f);
  const layers = int('num-layers');
  const hidden = int('hidden-size');
  const heads = int('num-attention-heads');
  const swiglu = has('swiglu');
  const rms = pick('normalization') === 'RMSNorm';
  if (layers) c.set('model.layers', layers, flagText('num-layers'));
  if (hidden) c.set('model.hidden', hidden, flagText('hidden-size'));
  if (heads) c.set('model.heads', heads, flagText('num-attention-heads'));
  const describesModel = layers !== undefined || hidden !== undefined || heads !== undefined;
  if (describesModel || swiglu || has('normalization')) {
    const llama = swiglu || rms;
    const from =
      [swiglu ? '--swiglu' : '', rms ? '--normalization RMSNorm' : ''].filter(Boolean).join(' ') ||
      'Megatron default: LayerNorm, GeLU MLP';
    c.set('model.arch', llama ? 'llama' : 'gpt', from, !llama);
    if (swiglu !== rms)
      c.warn(
        `${swiglu ? '--swiglu without --normalization RMSNorm' : '--normalization RMSNorm without --swiglu'}: ` +
          'simulated as the llama architecture, which has both (RMSNorm, SwiGLU, no biases, rotary positions)',
      );
    if (!llama && has('disable-bias-linear'))
      c.warn('--disable-bias-linear: the gpt architecture keeps its linear biases (a few parameters per layer)');
  }
  if (describesModel || has('untie-embeddings-and-output-weights')) {
    const untied = has('untie-embeddings-and-output-weights');
    c.set(
      'model.tiedEmbeddings',
      !untied,
      untied ? '--untie-embeddings-and-output-weights' : 'Megatron default: shared embeddings',
      !untied,
    );
  }
  // --num-query-groups counts only with --group-query-attention (default 1 group then).
  const groups = int('num-query-groups');
  if (has('group-query-attention')) {
    // TransformerConfig: "num_query_groups must be a multiple of tensor_model_parallel_size"; since
    // NVIDIA/Megatron-LM#2565 (core 0.16) a tp that is a multiple of the groups is taken too, the QKV activations
    // all-gathered over TP.
    const g = groups ?? 1;
    if (g % tp !== 0 && tp % g !== 0)
      throw new ScenarioError(
        '',
        `${SOURCE}: --group-query-attention with ${g} query group(s) ` +
          `(${groups ? flagText('num-query-groups') : 'Megatron default'}) over tensor parallelism ${tp}: ` +
          'Megatron refuses it (the groups must be a multiple of tp, ' +
          `or tp a multiple of the groups since core 0.16); use a tp that divides ${g}`,
      );
    c.set(
      'model.kvHeads',
      groups ?? 1,
      groups
        ? `--group-query-attention ${flagText('num-query-groups')}`
        : '--group-query-attention (Megatron default: 1 group)',
      !groups,
    );
  } else {
    if (groups) c.warn(`--num-query-groups ${groups} without --group-query-attention: ignored, as Megatron does`);
    if (heads) c.set('model.kvHeads', heads, 'no --group-query-attention: one KV head per attention head', true);
  }
  const ffn = int('ffn-hidden-size');
  if (ffn) c.set('model.ffnHidden', ffn, flagText('ffn-hidden-size'));
  else if (hidden) {
    // validate_args: 4h, or for SwiGLU int(4h·2/3 / 64)·64 so the 3-matrix MLP has about as many parameters.
    const value = swiglu ? Math.floor((4 * hidden * 2) / 3 / 64) * 64 : 4 * hidden;
    c.set(
      'model.ffnHidden',
      value,
      swiglu ? 'Megatron default for --swiglu: int(4h·2/3 / 64)·64' : 'Megatron default: 4 × hidden',
      true,
    );
  }
  const kv = int('kv-channels');
  // The projections map h to heads × kv_channels (validate_args defaults it to hidden // heads).
  if (kv) c.set('model.headDim', kv, flagText('kv-channels'));
  const mtp = int('mtp-num-layers');
  if (mtp) c.set('model.mtpLayers', mtp, flagText('mtp-num-layers'));
  importVocab(c, a, tp);
  const seq = int('seq-length');
  const maxPos = int('max-position-embeddings');
  if (seq && maxPos && maxPos < seq)
    throw new ScenarioError('', `${SOURCE}: --max-position-embeddings ${maxPos} is smaller than --seq-length ${seq}`);
  if (seq) c.set('training.seqLen', seq, flagText('seq-length'));
  if (maxPos || seq)
    c.set('model.seqLen', maxPos ?? seq!, maxPos ? flagText('max-position-embeddings') : flagText('seq-length'));
}

/** Megatron pads the vocabulary to a multiple of make-vocab-size-divisible-by × tp (`_vocab_size_with_padding`). */
function importVocab(c: ImportCollector, a: MegatronArgs, tp: number): void {
  const int = (f: string) => a.int(f);
  const padded = int('padded-vocab-size');
  if (padded) {
    c.set('model.vocab', padded, `--padded-vocab-size ${padded}`);
    return;
  }
  const divisibleBy = int('make-vocab-size-divisible-by') ?? MEGATRON_VOCAB_DIVISIBLE_BY;
  const given = int('vocab-size');
  const tokenizer = a.values.get('tokenizer-type');
  // Tokenizers with a fixed vocabulary: GPT-2 BPE (50257 tokens; Megatron's GPT examples pass its vocab and merge
  // files) and Llama 2's SentencePiece model (32000).
  const known: Record<string, number> = { GPT2BPETokenizer: 50257, Llama2Tokenizer: 32000 };
  let size: number | undefined;
  let from = '';
  if (given) [size, from] = [given, `--vocab-size ${given}`];
  else if (tokenizer && known[tokenizer])
    [size, from] = [known[tokenizer], `--tokenizer-type ${tokenizer} (${known[tokenizer]} tokens)`];
  else if (!tokenizer && a.has('merge-file')) [size, from] = [50257, '--merge-file: GPT-2 BPE (50257 tokens)'];
  else if (tokenizer)
    c.warn(
      `--tokenizer-type ${tokenizer}: its vocabulary size is not known here; ` +
        "the scenario's vocab is kept (give --vocab-size or --padded-vocab-size)",
    );
  if (size === undefined) return;
  c.set('model.vocab', padVocab(size, tp, divisibleBy), `${from}, padded to a multiple of ${divisibleBy} × tp ${tp}`);
}
