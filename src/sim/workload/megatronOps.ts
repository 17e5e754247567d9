import { attentionStage } from './attentionOps.js';
import { hostCost, type FrameworkSpec } from './framework.js';
import { activationStage, normStage, residualStage, type LayerContext } from './layerContext.js';
import {
  assembleBlock,
  elementwiseOp,
  linearStage,
  type Block,
  type Op,
  type RecomputeMode,
  type Stage,
} from './ops.js';

/**
 * A GPT transformer layer as Megatron-DeepSpeed (2023, PyTorch eager, DeepSpeed activation
 * checkpointing) runs it: its real kernel sequence and the host calls behind each kernel.
 *
 * Host calls per op are counted from the framework source (one call = one eager op, autograd node or
 * collective issued from Python; see framework.ts for the cost of one call, and of one c10d collective call,
 * which is charged apart). The counts:
 * - LayerNorm (apex `FusedLayerNormAffineFunction`): 1 kernel forward; backward 3 kernels
 *   (cuComputePartGradGammaBeta, cuComputeGradGammaBeta, cuComputeGradInput), 2 AccumulateGrad and the
 *   residual-gradient add where the layer input has two consumers: 6.
 * - Column/row-parallel linear (`LinearWithGradAccumulationAndAsyncCommunication`): forward `matmul`
 *   (+ `output + bias` for QKV, whose bias is not skipped); backward dgrad `matmul`, wgrad `matmul` +
 *   AccumulateGrad, and for QKV the bias `sum(dim=0)` + AccumulateGrad. A TP all-reduce is one call more.
 * - CoreAttention (unfused): `baddbmm`; fused causal softmax (`torch.tensor([scale])` + kernel: 2; it reads
 *   only the lower triangle of the scores) or the torch fallback (5 ops); RNG-tracker fork (get/set of the CUDA RNG
 *   state: 2) + dropout; `bmm`; `permute(2,0,1,3).contiguous()` (a copy). Backward: two `bmm` per batched GEMM, the
 *   `baddbmm` ones each followed by the ×alpha multiply, and `cat` of the q/k/v gradients (split backward).
 * - bias-dropout-add (TorchScript, `bias.expand_as` + fused kernel: 2); backward: fused kernel, the bias
 *   `sum_to` and its AccumulateGrad (3). bias-GeLU (`GeLUFunction.apply` + TorchScript: 2); backward: 3.
 * - `torch.tensor(0.0, device=...)` twice before the MLP: 2 calls and a host sync (`layerForwardSync`).
 * - DeepSpeed `CheckpointFunction`: forward entry + RNG-state capture (2); in backward, RNG swap in and
 *   back, `detach_variable`, and the nested `torch.autograd.backward` (4).
 * - Python-level framework calls without a kernel of their own cost the host as much: the 12 module calls
 *   of a layer forward (layer, 2 LayerNorms, ParallelAttention, QKV, CoreAttention, softmax, dropout,
 *   dense, ParallelMLP, fc1, fc2), its 11 custom autograd Function applications besides GeLU (2
 *   LayerNorm, 4 linear, 2 copy_to, 2 reduce_from, softmax) and their 12 Python backward calls.
 */
/* eslint-disable-next-line max-lines-per-function -- lists Megatron's host calls op by op, in the order its code
 * makes them (framework.ts) */
export function megatronGptLayer(
  c: LayerContext,
  i: number,
  names: Record<'ln1' | 'qkv' | 'proj' | 'ln2' | 'fc1' | 'fc2', string[]>,
  recompute: RecomputeMode,
): Block {
  const fw = c.fw as FrameworkSpec;
  const T = c.tokens;
  const e = c.e;
  const coll = c.tp > 1 ? 1 : 0;
  const qkvOut = (c.headsPerRank + 2 * c.kvHeadsPerRank) * c.headDim;
  const attnWidth = c.headsPerRank * c.headDim;
  const host = (op: Op, calls: number, sync = false, collectives = 0): Op => {
    op.hostNs = hostCost(fw, calls, collectives);
    if (sync) op.hostSync = true;
    return op;
  };

  const ln1 = normStage('ln1', c, names.ln1);
  // + the layer module, the LayerNorm module and its autograd Function.
  host(ln1.forward[0], 1 + 3 + (recompute === 'full' ? 2 : 0));
  host(ln1.backward[0], 6 + 1);

  const qkvLin = linearStage('qkv', T, c.h, qkvOut, c.dtype, names.qkv);
  const nQkv = T * qkvOut;
  const qkv: Stage = {
    // + ParallelAttention and ColumnParallelLinear modules, copy_to_tensor_model_parallel_region and
    // the linear's autograd Function; backward: both Functions' Python backward.
    forward: [host(qkvLin.forward[0], 1 + 4), host(elementwiseOp('qkv.bias', nQkv, 1, 2 * nQkv * e + qkvOut * e), 1)],
    backward: [
      host(qkvLin.backward[0], 1 + 2, false, coll),
      host(elementwiseOp('qkv.bgrad', nQkv, 1, nQkv * e + qkvOut * e), 1),
      host(qkvLin.backward[1], 4),
    ],
  };

  const attn = megatronAttention(c, fw, host, nQkv, T * attnWidth);

  const projLin = linearStage('proj', T, attnWidth, c.h, c.dtype, names.proj);
  // + RowParallelLinear module, the linear's Function and reduce_from_tensor_model_parallel_region.
  host(projLin.forward[0], 1 + 3, false, coll);
  host(projLin.backward[0], 1 + 2);
  host(projLin.backward[1], 2);

  const res1 = residualStage('residual1', c);
  const res2 = residualStage('residual2', c);
  const nH = c.spTokens * c.h;
  for (const r of [res1, res2]) {
    host(r.forward[0], 2);
    // The bias gradient is a sum over tokens of the branch gradient: one more read.
    r.backward[0] = host({ ...r.backward[0], bytes: r.backward[0].bytes + nH * e }, 3);
  }

  const ln2 = normStage('ln2', c, names.ln2);
  host(ln2.forward[0], 1 + 2);
  host(ln2.backward[0], 6 + 1);

  const fc1 = linearStage('fc1', T, c.h, c.ffnPerRank, c.dtype, names.fc1);
  // + ParallelMLP and ColumnParallelLinear modules, copy_to region and the linear's Function.
  host(fc1.forward[0], 1 + 2 + 4, fw.layerForwardSync);
  host(fc1.backward[0], 1 + 2, false, coll);
  host(fc1.backward[1], 2);

  const act = activationStage(c);
  const nF = T * c.ffnPerRank;
  host(act.forward[0], 2);
  act.backward[0] = host({ ...act.backward[0], bytes: act.backward[0].bytes + nF * e }, 3 + 1);

  const fc2 = linearStage('fc2', T, c.ffnPerRank, c.h, c.dtype, names.fc2);
  host(fc2.forward[0], 1 + 3, false, coll);
  host(fc2.backward[0], 1 + 2);
  host(fc2.backward[1], 2);

  const stages: Stage[] = [ln1, qkv, attn, projLin, res1, ln2, fc1, act, fc2, res2];
  let again: Op[] = [];
  if (recompute === 'full') for (const s of stages) again.push(...s.forward);
  else if (recompute === 'selective') again = attn.core;
  const block = assembleBlock(`layer.${i}`, i, stages, again);
  if (recompute === 'full' && block.backward.length > 0) {
    // The recomputed forward runs inside CheckpointFunction.backward: its entry costs the backward's 4
    // calls instead of the forward's 2 (copied with the ln1 op).
    const first = block.backward[0];
    first.hostNs = (first.hostNs ?? 0) + hostCost(fw, 4 - 2);
  }
  return block;
}

/** Whether Megatron's fused scale-mask-softmax kernel runs (`FusedScaleMaskSoftmax.is_kernel_available`, causal). */
export function fusedSoftmaxAvailable(fw: FrameworkSpec, attnBatches: number, seqLen: number): boolean {
  const batchPerBlock = seqLen <= 128 ? 8 : 4;
  return (
    seqLen > 16 &&
    seqLen <= fw.fusedSoftmaxMaxSeq &&
    seqLen % 4 === 0 &&
    attnBatches % 4 === 0 &&
    attnBatches % batchPerBlock === 0
  );
}

/**
 * Megatron's `forward_torch_softmax` (softmax_in_fp32), as `base` (the softmax op) over `n` score elements, one op per
 * kernel: float() (r2 w4), ×scale (r4 w4), masked_fill_ (r4 w4; the [b, 1, s, s] mask, s² bytes, stays in L2 across
 * heads), softmax (r4 w4), half() (r4 w2): 36 bytes per element. Backward in reverse: half()'s (r2 w4), softmax's
 * (y and dy read, dx written: 12), masked_fill's (r4 w4), ×scale's (r4 w4), float()'s (r4 w2): 40. Each streams at
 * the unfused passes' share (`base.bandwidthFactor`); the widening casts and the masked fills, whose mask is
 * broadcast, run on PyTorch's generic kernels (kernelTime.ts `genericKernelNs`). The softmax op keeps its name.
 */
function torchSoftmaxFallback(base: Op, n: number, backward: boolean): Op[] {
  const pass = (name: string, bytesPerElement: number, flopsPerElement: number, generic = false): Op => ({
    ...base,
    name,
    flops: flopsPerElement * n,
    bytes: bytesPerElement * n,
    ...(generic ? { genericElements: n } : {}),
  });
  if (!backward) {
    return [
      pass('attn.softmax.to_fp32', 6, 0, true),
      pass('attn.softmax.scale', 8, 1),
      pass('attn.softmax.mask', 8, 1, true),
      pass('attn.softmax', 8, 4),
      pass('attn.softmax.to_half', 6, 0),
    ];
  }
  return [
    pass('attn.softmax.to_half.bwd', 6, 0, true),
    pass('attn.softmax.bwd', 12, 4),
    pass('attn.softmax.mask.bwd', 8, 1, true),
    pass('attn.softmax.scale.bwd', 8, 1),
    pass('attn.softmax.to_fp32.bwd', 6, 0),
  ];
}

/** Megatron's CoreAttention (unfused) with its layout copies, or the flash path with host calls. */
function megatronAttention(
  c: LayerContext,
  fw: FrameworkSpec,
  host: (op: Op, calls: number) => Op,
  nQkv: number,
  nCtx: number,
): Stage & { core: Op[] } {
  const base = attentionStage(c);
  const e = c.e;
  if (c.flash) {
    // Megatron-DeepSpeed's flash path: rearrange(...).contiguous() of q, k, v and of the output.
    for (const op of base.forward) host(op, 1 + 3 + 1 + 2);
    for (const op of base.backward) host(op, 1 + 4);
    return { ...base, forward: base.forward, backward: base.backward };
  }
  const n = c.b * c.headsPerRank * c.s * c.s;
  const fused = fusedSoftmaxAvailable(fw, c.b * c.headsPerRank, c.s);
  // GPT's fused kernel is the causal one (scaled_upper_triang_masked_softmax.h): row r reads only its first r + 1
  // scores (`local_seq = blockIdx.x + 1`) and writes zeros past them; backward reads the gradient and the output
  // on that triangle and writes whole rows. On average a row reads this share of its elements.
  const causalRead = (c.s + 1) / (2 * c.s);
  const core: Op[] = [];
  for (const op of base.core) {
    if (op.name === 'attn.softmax' && !fused) {
      core.push(...torchSoftmaxFallback(op, n, false).map((o) => host(o, o.name === 'attn.softmax' ? 2 : 1)));
    } else if (op.name === 'attn.softmax') core.push(host({ ...op, bytes: n * e * (causalRead + 1) }, 2 + 2));
    else if (op.name === 'attn.dropout') core.push(host(op, 1 + 2 + 1));
    else if (op.name === 'attn.scores') core.push(host(op, 1 + 1));
    else core.push(host(op, 1));
  }
  const copy = host(elementwiseOp('attn.context.copy', nCtx, 0, 2 * nCtx * e), 1);
  const forward = [...core, copy];
  const backward: Op[] = [host(elementwiseOp('attn.context.copy.bwd', nCtx, 0, 2 * nCtx * e), 1)];
  for (const op of base.backward) {
    if (op.name === 'attn.softmax.bwd' && !fused) {
      backward.push(...torchSoftmaxFallback(op, n, true).map((o) => host(o, 1)));
    } else if (op.name === 'attn.softmax.bwd')
      backward.push(host({ ...op, bytes: n * e * (2 * causalRead + 1) }, 1 + 1));
    else if (op.name.startsWith('attn.scores.')) backward.push(host(op, 2));
    else backward.push(host(op, 1));
  }
  backward.push(host(elementwiseOp('attn.qkv.cat', nQkv, 0, 2 * nQkv * e), 1));
  return { forward, backward, core: forward };
}

/**
 * Host calls and Megatron's extra traffic for the embedding and head blocks of a GPT run by
 * Megatron-DeepSpeed's pipeline module (GPTModelPipe):
 * - first stage, per micro-batch: `get_batch_pipe` (broadcast_data: sizes and data sent to the GPU with
 *   blocking copies, then the causal mask `tril(ones)`, `< 0.5`, loss mask, position ids): 10 calls and
 *   a host sync; the vocab-parallel lookup (with TP: range mask, clone, subtract, masked assign,
 *   F.embedding, masked_fill, all-reduce = 8 + 1, else F.embedding), the position lookup and add (2),
 *   dropout and `transpose(0, 1).contiguous()` (2, and a copy of s·b·h). Backward: the embedding dense
 *   backward (sort-based, about 5 kernels) + AccumulateGrad for each table.
 * - last stage: final LayerNorm, `transpose(0, 1).contiguous()`, the logits GEMM, and the vocab-parallel
 *   cross-entropy on `logits.float()` (cross_entropy.py: max, all-reduce, subtract, target masking and
 *   gather, all-reduce, exp, sum, all-reduce, log − predicted, divide; then the loss-mask average):
 *   23 calls. Its fp32 passes move 38 bytes per logit forward (float() r2 w4, max r4, sub r4 w4, exp r4
 *   w4, sum r4, div r4 w4) and 14 backward (×grad r4 w4, back to half r4 w2).
 * - module calls and autograd Functions as in a layer: the embedding modules (3 + position + dropout),
 *   the final LayerNorm (module + Function, Python backward), copy_to before the logits, the
 *   cross-entropy Function (forward and backward).
 * - DeepSpeed's pipeline engine runs every micro-batch as instructions (deepspeed/runtime/pipe/engine.py; Megatron-
 *   DeepSpeed trains GPTModelPipe through it even at pp 1), each with tensor work of its own (`PIPE_ENGINE_CALLS`).
 */
/**
 * Framework calls of DeepSpeed's PipelineEngine per micro-batch, outside the model (deepspeed/runtime/pipe/engine.py,
 * 2023; DeepSpeedEngine.backward in engine.py; FP16_Optimizer.backward in runtime/fp16/fused_optimizer.py):
 * - first stage: `_exec_load_micro_batch` takes the next batch from the data iterator (1) and moves each of the three
 *   inputs (tokens, position ids, attention mask) with `x.clone().detach().to(device)` (3 × 3); `_exec_forward_pass`
 *   clones the three inputs again (3) and enters `DeepSpeedEngine.forward` (1): 14.
 * - last stage: the labels and loss mask, `clone().detach().to(device)` (2 × 3); after the loss, `loss.detach()` into
 *   `fwd_outputs` and `total_loss += loss.detach()` (3); in `_exec_backward_pass`, `DeepSpeedEngine.backward` scales
 *   the loss by the accumulation steps (`loss.float()`, divide: 2), `FP16_Optimizer.backward` multiplies it by the loss
 *   scale (`loss.float() * cur_scale`: 2) and calls `scaled_loss.backward()` (1).
 */
export const PIPE_ENGINE_CALLS = { firstStageForward: 14, lastStageForward: 6 + 3, lastStageBackward: 5 } as const;

/**
 * Megatron's `get_batch_pipe` (pretrain_gpt.py): `broadcast_data` of the token batch over the TP group (sizes and
 * data: two broadcasts, with blocking copies), the causal mask `tril(ones)`, `< 0.5`, the loss mask and the position
 * ids: 10 calls, 2 of them collectives. The first stage runs it for every micro-batch, a pipelined last stage too.
 */
export const GET_BATCH_PIPE_CALLS = { plain: 8, collectives: 2 } as const;

/* eslint-disable-next-line max-lines-per-function -- lists Megatron's host calls op by op, in the order its code
 * makes them (framework.ts) */
export function megatronGptEdges(block: Block, c: LayerContext): Block {
  const fw = c.fw as FrameworkSpec;
  const e = c.e;
  const nH = c.tokens * c.h;
  const coll = c.tp > 1 ? 1 : 0;
  const set = (op: Op, calls: number, extraBytes = 0, sync = false, collectives = 0): Op => {
    const out: Op = { ...op, bytes: op.bytes + extraBytes, hostNs: hostCost(fw, calls, collectives) };
    if (sync) out.hostSync = true;
    return out;
  };
  const nLogits = c.tokens * c.vocabPerRank;
  const map = (op: Op): Op => {
    switch (op.name) {
      // get_batch_pipe's 10 calls include broadcast_data's two broadcasts over the TP group (any size).
      case 'embed.lookup':
        return set(
          op,
          PIPE_ENGINE_CALLS.firstStageForward + GET_BATCH_PIPE_CALLS.plain + 3 + (c.tp > 1 ? 8 : 1),
          0,
          true,
          GET_BATCH_PIPE_CALLS.collectives + coll,
        );
      case 'embed.position':
        return set(op, 2 + 1);
      case 'embed.dropout':
        return set(op, 2 + 1, 2 * nH * e);
      case 'embed.dropout.bwd':
        return set(op, 2, 2 * nH * e);
      case 'embed.position.wgrad':
        return set(op, 1 + 5 + 1);
      case 'embed.wgrad':
        return set(op, 5 + 1 + (c.tp > 1 ? 1 : 0));
      case 'final_norm':
        return set(op, 2 + 2, 2 * nH * e);
      case 'final_norm.bwd':
        return set(op, 6 + 1, 2 * nH * e);
      case 'lm_head':
        return set(op, 1 + 1);
      case 'lm_head.dgrad':
        return set(op, 1 + 1, 0, false, coll);
      case 'lm_head.wgrad':
        return set(op, 2);
      // The cross-entropy's 23 calls include its three all-reduces (max, target logit, sum of exp), issued
      // on the TP group whatever its size.
      case 'loss':
        return set(
          fw.fp32CrossEntropy ? { ...op, bytes: 38 * nLogits } : op,
          23 - 3 + 1 + PIPE_ENGINE_CALLS.lastStageForward,
          0,
          false,
          3,
        );
      // DeepSpeedEngine.backward's `loss.mean().item()` (2 calls and a host sync) comes first when modelled.
      case 'loss.bwd':
        return set(
          fw.fp32CrossEntropy ? { ...op, bytes: 14 * nLogits } : op,
          6 + 1 + PIPE_ENGINE_CALLS.lastStageBackward + (fw.lossItemSync ? 2 : 0),
          0,
          fw.lossItemSync,
        );
      default:
        return set(op, 1);
    }
  };
  return { ...block, forward: block.forward.map(map), backward: block.backward.map(map) };
}
