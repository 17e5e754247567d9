import type { LayerContext } from './layerContext.js';
import { elementwiseOp, type Op, type Stage } from './ops.js';

/**
 * Llama's element-wise work as eager PyTorch runs it, one kernel per tensor op, in the form of Hugging Face
 * Transformers' `modeling_llama.py` (the form IBM's fms-fsdp and most PyTorch training code share). Compiled code
 * (torch.compile) and fused-kernel frameworks run each of these as one kernel (layerContext.ts); `training.kernels:
 * eager` selects these. Bytes per element are read + write of each op, with e the activation element size (2 for
 * bf16/fp16) and 4 for the fp32 temporaries; per-token reductions are counted, their tiny per-token outputs not.
 */

/** An op over `n` elements moving `bytesPerElement` bytes each, on PyTorch's vectorized kernel. */
const pass = (name: string, n: number, bytesPerElement: number, flopsPerElement = 1, params?: string[]): Op =>
  elementwiseOp(name, n, flopsPerElement, n * bytesPerElement, params);

/**
 * An op like `pass` that runs on PyTorch's generic element-wise kernels: one with a broadcast or permuted operand, a
 * cast to a wider type, a concatenation or a strided copy, timed by the elements it indexes where that is slower
 * than its bytes (kernelTime.ts `genericKernelNs`).
 */
const generic = (name: string, n: number, bytesPerElement: number, flopsPerElement = 1, params?: string[]): Op => ({
  ...pass(name, n, bytesPerElement, flopsPerElement, params),
  genericElements: n,
});

/**
 * `LlamaRMSNorm.forward`: x.to(float32); pow(2); mean(-1); + eps; rsqrt; x * rsqrt(·); .to(input dtype);
 * weight * x. Forward (e = 2): 6 + 8 + 4 + 8 + 6 + 4 = 36 bytes per element (a fused kernel: 4). Backward, as
 * autograd runs it: the weight multiply (grad·w, 2e; the weight's gradient, grad·x written in full and summed over
 * tokens, 4e), the cast (6), x · r (grad·r, 8; grad·x in fp32 written and summed per token for r, 16), the mean's
 * expanded gradient (4), pow's backward as PyTorch runs it (x.pow(1) 8, × 2 8, × grad 12), the sum of the two
 * paths into x (12), the cast back (6), and the join with the residual gradient that the fused kernel also counts
 * (3e): 98 bytes per element (fused: 8).
 */
export function eagerRmsNorm(name: string, c: LayerContext, params: string[], tokens = c.spTokens): Stage {
  const n = tokens * c.h;
  const e = c.e;
  return {
    forward: [
      generic(`${name}.to_fp32`, n, e + 4),
      pass(`${name}.pow`, n, 8),
      pass(`${name}.mean`, n, 4),
      generic(`${name}.mul_rsqrt`, n, 8),
      pass(`${name}.to_input`, n, 4 + e),
      generic(`${name}.mul_weight`, n, 2 * e),
    ],
    backward: [
      generic(`${name}.mul_weight.bwd_x`, n, 2 * e),
      pass(`${name}.mul_weight.bwd_w`, n, 4 * e, 2, params),
      generic(`${name}.to_input.bwd`, n, e + 4),
      generic(`${name}.mul_rsqrt.bwd_x`, n, 8),
      pass(`${name}.mul_rsqrt.bwd_r`, n, 16, 2),
      generic(`${name}.mean.bwd`, n, 4),
      pass(`${name}.pow.bwd.pow1`, n, 8),
      pass(`${name}.pow.bwd.scale`, n, 8),
      pass(`${name}.pow.bwd.mul`, n, 12),
      pass(`${name}.grad_sum`, n, 12),
      pass(`${name}.to_fp32.bwd`, n, 4 + e),
      pass(`${name}.join_residual`, n, 3 * e),
    ],
  };
}

/**
 * `apply_rotary_pos_emb` on Q and K: q·cos + rotate_half(q)·sin, where rotate_half is cat(−x2, x1) of the two
 * halves. Per element: the multiply by cos (2e), the negation of one half (e), the concatenation (2e), the multiply
 * by sin (2e), the add (3e): 10e bytes (a fused kernel: 2e). Backward: grad·cos (2e), grad·sin (2e), the rotation's
 * transpose as autograd runs it (each half-slice's gradient zero-filled to full size and copied in, 4e, and the
 * negation, e), and the two adds that join the input's three gradients (6e): 15e. Q and K are permuted views and cos
 * and sin broadcast, so all but the slices and the last add run on the generic kernels (`generic`).
 */
export function eagerRotary(c: LayerContext): Stage {
  const n = c.tokens * (c.headsPerRank + c.kvHeadsPerRank) * c.headDim;
  const e = c.e;
  return {
    forward: [
      generic('rope.mul_cos', n, 2 * e),
      generic('rope.neg_half', n / 2, 2 * e),
      generic('rope.cat', n, 2 * e),
      generic('rope.mul_sin', n, 2 * e),
      generic('rope.add', n, 3 * e),
    ],
    backward: [
      generic('rope.bwd.mul_cos', n, 2 * e),
      generic('rope.bwd.mul_sin', n, 2 * e),
      generic('rope.bwd.neg_half', n / 2, 2 * e),
      pass('rope.bwd.slices', n, 4 * e),
      generic('rope.bwd.add', n, 3 * e),
      pass('rope.bwd.add2', n, 3 * e),
    ],
  };
}

/**
 * The layout copies around Hugging Face's attention, strided copies on the generic kernels (2e bytes per element):
 * the output, [b, heads, s, d], made contiguous as [b, s, heads·d] for o_proj (`transpose(1, 2).contiguous()`); in the
 * backward, its gradient made contiguous for the attention kernel's backward (`before` the kernel), and the query,
 * key and value gradients copied from [b, heads, s, d] back to [b, s, heads·d] for their projections (`after` the
 * rotary backward). The H200 profile of a Llama-2-7B layer at 4k has six calls of PyTorch's strided copy kernel, 101 M
 * elements in 181 µs (faster per element than the other generic kernels); these ops charge 84 M elements at the
 * generic rate, 237 µs there, while rotary's concat, on a kernel of its own, measured 140 µs against 99 modelled:
 * the two errors offset, and the layer's non-GEMM kernels sum within 1% of the profile's.
 */
export function eagerAttentionLayout(c: LayerContext): { forward: Op[]; before: Op[]; after: Op[] } {
  const q = c.tokens * c.headsPerRank * c.headDim;
  const kv = c.tokens * c.kvHeadsPerRank * c.headDim;
  const e = c.e;
  return {
    forward: [generic('attn.out.contiguous', q, 2 * e)],
    before: [generic('attn.out.contiguous.bwd', q, 2 * e)],
    after: [generic('attn.q.grad.contiguous', q, 2 * e), generic('attn.kv.grad.contiguous', 2 * kv, 2 * e)],
  };
}

/**
 * `LlamaMLP`: act_fn(gate) * up with SiLU: silu (2e per element of the MLP width), then the multiply (3e); a fused
 * kernel moves 3e. Backward: the multiply's two gradients (3e each; the SiLU output is kept for it) and SiLU's
 * (3e, recomputing σ from the gate): 9e, against 5e fused.
 */
export function eagerSwiglu(c: LayerContext, tokens = c.tokens, width = c.ffnPerRank): Stage {
  const n = tokens * width;
  const e = c.e;
  return {
    forward: [pass('silu', n, 2 * e, 4), pass('silu_mul_up', n, 3 * e)],
    backward: [
      pass('silu_mul_up.bwd_gate', n, 3 * e),
      pass('silu_mul_up.bwd_up', n, 3 * e),
      pass('silu.bwd', n, 3 * e, 6),
    ],
  };
}
