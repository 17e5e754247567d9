/**
 * Multi-head latent attention (DeepSeek-AI, "DeepSeek-V2", 2024, §2.1; DeepSeek-V3 keeps it): queries and keys/values
 * are projected down to low-rank latents (q_lora_rank, kv_lora_rank), normalised, and projected up per head; each
 * head's query and key are a no-position part and a rotary part (qk_nope_head_dim + qk_rope_head_dim, the rotary key
 * shared by the heads), its value v_head_dim wide.
 */
export interface MlaSpec {
  /** The query latent's width; 0: the queries are projected straight to the heads (DeepSeek-V2-Lite). */
  qLoraRank: number;
  kvLoraRank: number;
  qkNopeHeadDim: number;
  qkRopeHeadDim: number;
  vHeadDim: number;
}

/** A query's (and key's) width per head: the no-position and rotary parts. */
export function mlaQkHeadDim(mla: MlaSpec): number {
  return mla.qkNopeHeadDim + mla.qkRopeHeadDim;
}

/**
 * The head width an attention kernel of equal FLOPs has: QKᵀ costs 2·s²·d_qk and P·V 2·s²·d_v a head, so a kernel of
 * width (d_qk + d_v)/2 does the same work (DeepSeek-V3: (192 + 128)/2 = 160).
 */
export function mlaKernelHeadDim(mla: MlaSpec): number {
  return (mlaQkHeadDim(mla) + mla.vHeadDim) / 2;
}
