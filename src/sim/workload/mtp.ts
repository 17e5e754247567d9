/**
 * Multi-token prediction (DeepSeek-AI, "DeepSeek-V3 Technical Report", arXiv 2412.19437, §2.2; Megatron-Core's
 * multi_token_prediction.py, --mtp-num-layers; HF num_nextn_predict_layers): D modules after the main model, module d
 * predicting the token d + 1 further ahead. Each normalises the previous depth's hidden state (the main model's last
 * layer's for d = 0) and the embedding of the tokens shifted by d + 1 (an RMSNorm each), concatenates the two, projects
 * 2h → h (eh_proj), runs one transformer layer like the main model's (with experts where its layers have them), then
 * its own final norm, the shared output head and a cross-entropy. The embedding and the output head are the main
 * model's; Megatron builds an embedding on the last pipeline stage, which holds the modules, and all-reduces its
 * gradient with the first stage's, as for tied embeddings.
 */

/** What the MTP helpers read of a model. */
interface WithMtp {
  layers: number;
  mtpLayers?: number;
}

/** Multi-token-prediction depths D (0: none). */
export function mtpDepths(model: WithMtp): number {
  return model.mtpLayers ?? 0;
}

/** The layer index of depth d's module: past the head's (`layers`), so that it sits with the head on the last stage. */
export function mtpLayerIndex(model: WithMtp, depth: number): number {
  return model.layers + 1 + depth;
}

/** The depth whose module layer index `layer` is, or undefined for any other layer. */
export function mtpDepthOf(model: WithMtp, layer: number): number | undefined {
  const depth = layer - model.layers - 1;
  return depth >= 0 && depth < mtpDepths(model) ? depth : undefined;
}

/** The name prefix of module d's tensors, as Megatron-Core registers them. */
export function mtpPrefix(depth: number): string {
  return `mtp.layers.${depth}.`;
}

/**
 * The name prefix of a Llama-shaped transformer layer's tensors: `model.layers.i.` in the main model (Hugging Face's
 * names), the module's transformer layer for a multi-token-prediction depth.
 */
export function llamaLayerPrefix(model: WithMtp, layer: number): string {
  const depth = mtpDepthOf(model, layer);
  return depth === undefined ? `model.layers.${layer}.` : `${mtpPrefix(depth)}transformer_layer.`;
}
