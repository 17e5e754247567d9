/**
 * The types the optimizer keeps its state in, and what they cost in memory and in the update's HBM traffic.
 *
 * Mixed-precision Adam keeps an fp32 master copy of the weights and fp32 momentum and variance (Micikevicius et al.
 * 2018; ZeRO §3.1: 12 bytes per parameter). Frameworks let them be smaller:
 * - Megatron-LM's `--use-precision-aware-optimizer` with `--main-params-dtype fp32|fp16`, `--exp-avg-dtype` and
 *   `--exp-avg-sq-dtype fp32|fp16|bf16|fp8` (megatron/training/arguments.py), run by Transformer Engine's FusedAdam;
 *   with bf16 weights and an fp32 master it keeps only the 16 bits a bf16 weight lacks (`store_param_remainders`,
 *   on by default: megatron/core/optimizer/optimizer_config.py);
 * - Apex's DistributedFusedAdam (NeMo's `distributed_fused_adam`) keeps its parameter shard, momentum and variance in
 *   its `dtype` (apex/contrib/optimizers/distributed_fused_adam.py, "datatype for optimizer state").
 */

import type { OptimizerKind, Precision } from './memory.js';

export type MasterWeightsType = 'fp32' | 'bf16' | 'fp16' | 'remainders';
export type MomentType = 'fp32' | 'bf16' | 'fp16' | 'fp8';

export const MASTER_WEIGHTS_TYPES: readonly MasterWeightsType[] = ['fp32', 'bf16', 'fp16', 'remainders'];
export const MOMENT_TYPES: readonly MomentType[] = ['fp32', 'bf16', 'fp16', 'fp8'];

export interface OptimizerStateTypes {
  /** The master copy of mixed-precision training; `remainders`: the low 16 bits of fp32 that a bf16 weight lacks. */
  masterWeights: MasterWeightsType;
  /** Adam's first moment (exp_avg), or SGD's momentum buffer. */
  momentum: MomentType;
  /** Adam's second moment (exp_avg_sq); SGD has none. */
  variance: MomentType;
}

export const FP32_OPTIMIZER_STATE: OptimizerStateTypes = { masterWeights: 'fp32', momentum: 'fp32', variance: 'fp32' };

const BYTES_PER_ELEMENT: Record<MasterWeightsType | MomentType, number> = {
  fp32: 4,
  bf16: 2,
  fp16: 2,
  fp8: 1,
  remainders: 2,
};

/**
 * Optimizer-state bytes per parameter before sharding: the master copy (mixed precision only: in fp32 training the
 * weights are the master), the momentum, and Adam's variance. All fp32: mixed Adam 12, mixed SGD 8, fp32 Adam 8,
 * fp32 SGD 4.
 */
export function optimizerStateBytesPerParam(
  precision: Precision,
  optimizer: OptimizerKind,
  state: OptimizerStateTypes = FP32_OPTIMIZER_STATE,
): number {
  const master = precision === 'mixed' ? BYTES_PER_ELEMENT[state.masterWeights] : 0;
  const variance = optimizer === 'adam' ? BYTES_PER_ELEMENT[state.variance] : 0;
  return master + BYTES_PER_ELEMENT[state.momentum] + variance;
}

/**
 * HBM bytes per parameter of one fused optimizer update (multi-tensor apply): it reads the state and the gradient and
 * writes the state back, and writes the weights the forward uses. In mixed precision that is the 16-bit copy (2 B),
 * and a master kept as remainders also reads it, to rebuild the fp32 value; in fp32 training it reads and writes the
 * fp32 weights (4 + 4). All fp32: mixed precision with 16-bit gradients, Adam 28, SGD 20; fp32 training (4-byte
 * gradients), Adam 28, SGD 20.
 */
export function optimizerStepBytesPerParam(
  precision: Precision,
  optimizer: OptimizerKind,
  gradientBytes: number,
  state: OptimizerStateTypes = FP32_OPTIMIZER_STATE,
): number {
  const stateBytes = optimizerStateBytesPerParam(precision, optimizer, state);
  const weightsRead = precision === 'fp32' ? 4 : state.masterWeights === 'remainders' ? 2 : 0;
  const weightsWritten = precision === 'fp32' ? 4 : 2;
  return stateBytes + gradientBytes + weightsRead + stateBytes + weightsWritten;
}

/** Whether any part of the state is kept in something other than fp32. */
export function isReducedOptimizerState(state: OptimizerStateTypes | undefined): boolean {
  return (
    state !== undefined && (state.masterWeights !== 'fp32' || state.momentum !== 'fp32' || state.variance !== 'fp32')
  );
}

/**
 * The parts not kept in fp32, as one phrase ("master remainders, momentum bf16, variance bf16"); empty when all are.
 * (A scenario sets a master type only with mixed precision and a variance type only with Adam.)
 */
export function describeOptimizerState(state: OptimizerStateTypes): string {
  const parts: [string, string][] = [
    ['master', state.masterWeights],
    ['momentum', state.momentum],
    ['variance', state.variance],
  ];
  return parts
    .filter(([, type]) => type !== 'fp32')
    .map(([part, type]) => `${part} ${type}`)
    .join(', ');
}
