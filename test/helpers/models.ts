/**
 * A small fine-grained model with experts, as a scenario's inline `model` section: `layers` Llama layers of width 2048
 * (16 heads, dense MLP 8192), 64 experts of 512, top 6; `moe` fields replace the experts' own.
 */
export function fineMoeModel(layers: number, moe: Record<string, unknown> = {}) {
  return {
    arch: 'llama',
    layers,
    hidden: 2048,
    heads: 16,
    kvHeads: 16,
    ffnHidden: 8192,
    seqLen: 4096,
    vocab: 32000,
    moe: { experts: 64, topK: 6, expertFfnHidden: 512, ...moe },
  };
}
