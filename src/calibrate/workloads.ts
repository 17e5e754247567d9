import type { Dtype } from '../sim/hardware/types.js';
import { assembleBlock, dtypeBytes, linearStage, type Op } from '../sim/workload/ops.js';
import type { GemmDims } from './types.js';

/**
 * The GEMMs of one transformer layer, forward and backward, built with the simulator's own `linearStage` so
 * that measured and simulated workloads have exactly the same shapes (Megatron order: dgrad before wgrad).
 */

/** A transformer layer's linear layers; attention's batched GEMMs are left out (flash attention is fused). */
export interface LayerShape {
  name: string;
  hidden: number;
  ffnHidden: number;
  /** Hidden size of K and V together per token is 2·kvHidden (grouped-query attention when < hidden). */
  kvHidden: number;
  mlp: 'gelu' | 'swiglu';
  tokens: number;
}

/** The layer's GEMM ops (forward in order, then backward in execution order). */
export function layerOps(l: LayerShape, dtype: Dtype): { forward: Op[]; backward: Op[] } {
  const stages = [
    linearStage('qkv', l.tokens, l.hidden, l.hidden + 2 * l.kvHidden, dtype, ['qkv.weight']),
    linearStage('proj', l.tokens, l.hidden, l.hidden, dtype, ['proj.weight']),
  ];
  if (l.mlp === 'swiglu') {
    stages.push(linearStage('gate', l.tokens, l.hidden, l.ffnHidden, dtype, ['gate.weight']));
    stages.push(linearStage('up', l.tokens, l.hidden, l.ffnHidden, dtype, ['up.weight']));
    stages.push(linearStage('down', l.tokens, l.ffnHidden, l.hidden, dtype, ['down.weight']));
  } else {
    stages.push(linearStage('fc1', l.tokens, l.hidden, l.ffnHidden, dtype, ['fc1.weight']));
    stages.push(linearStage('fc2', l.tokens, l.ffnHidden, l.hidden, dtype, ['fc2.weight']));
  }
  const block = assembleBlock(l.name, 0, stages);
  return { forward: block.forward, backward: block.backward };
}

export function opDims(op: Op): GemmDims {
  if (!op.gemm) throw new Error(`${op.name} is not a GEMM`);
  return { m: op.gemm.m, n: op.gemm.n, k: op.gemm.k };
}

/** Every distinct GEMM shape of the layer, forward and backward. */
export function layerGemmShapes(l: LayerShape, dtype: Dtype): GemmDims[] {
  const { forward, backward } = layerOps(l, dtype);
  const seen = new Map<string, GemmDims>();
  for (const op of [...forward, ...backward]) {
    const d = opDims(op);
    seen.set(`${d.m}x${d.n}x${d.k}`, d);
  }
  return [...seen.values()];
}

/**
 * Bytes of the weight gradient a wgrad GEMM completes (in × out elements in `dtype`): what a DDP bucket copy
 * or a ZeRO-Offload gradient copy moves after it.
 */
export function gradientBytes(op: Op, dtype: Dtype): number {
  if (!op.gemm || !op.gradParams) return 0;
  return op.gemm.m * op.gemm.n * dtypeBytes(dtype);
}

/**
 * Layers the calibration fits on (FIT_LAYERS) and layers validation holds out (HELD_OUT_LAYERS), per backend.
 * GPU shapes are real models: GPT-2 medium/large, Llama-2 7B for the fit; BERT-large, Llama-2 13B, Mistral 7B
 * (GQA) for validation. CPU shapes are the hidden sizes of small real models with few tokens, so a layer takes
 * tens of milliseconds on one core.
 */
export const FIT_LAYERS: Record<'cpu' | 'cuda', LayerShape[]> = {
  cpu: [{ name: 'gpt2-medium', hidden: 1024, ffnHidden: 4096, kvHidden: 1024, mlp: 'gelu', tokens: 128 }],
  cuda: [
    { name: 'gpt2-large', hidden: 1280, ffnHidden: 5120, kvHidden: 1280, mlp: 'gelu', tokens: 8192 },
    { name: 'llama2-7b', hidden: 4096, ffnHidden: 11008, kvHidden: 4096, mlp: 'swiglu', tokens: 4096 },
  ],
};

export const HELD_OUT_LAYERS: Record<'cpu' | 'cuda', LayerShape[]> = {
  cpu: [
    { name: 'bert-base', hidden: 768, ffnHidden: 3072, kvHidden: 768, mlp: 'gelu', tokens: 96 },
    { name: 'llama-small', hidden: 640, ffnHidden: 1728, kvHidden: 320, mlp: 'swiglu', tokens: 160 },
  ],
  cuda: [
    { name: 'bert-large', hidden: 1024, ffnHidden: 4096, kvHidden: 1024, mlp: 'gelu', tokens: 16384 },
    { name: 'llama2-13b', hidden: 5120, ffnHidden: 13824, kvHidden: 5120, mlp: 'swiglu', tokens: 4096 },
    { name: 'mistral-7b', hidden: 4096, ffnHidden: 14336, kvHidden: 1024, mlp: 'swiglu', tokens: 2048 },
  ],
};
