import { describe, expect, it } from 'vitest';
import { memoryPerGpu, STATE_BYTES_PER_PARAM } from '../../../src/sim/memory/memory.js';
import {
  describeOptimizerState,
  FP32_OPTIMIZER_STATE,
  isReducedOptimizerState,
  optimizerStateBytesPerParam,
  optimizerStepBytesPerParam,
} from '../../../src/sim/memory/optimizerState.js';
import { optimizerOp } from '../../../src/sim/workload/kernelTime.js';
import { modelPreset } from '../../../src/sim/workload/modelPresets.js';

const BF16_MOMENTS = { masterWeights: 'fp32', momentum: 'bf16', variance: 'bf16' } as const;

describe('optimizer state types', () => {
  it('keeps the published bytes per parameter when everything is fp32 (ZeRO §3.1: K = 12 for mixed Adam)', () => {
    expect(optimizerStateBytesPerParam('mixed', 'adam')).toBe(12);
    for (const precision of ['mixed', 'fp32'] as const) {
      for (const optimizer of ['adam', 'sgd'] as const) {
        expect(optimizerStateBytesPerParam(precision, optimizer, FP32_OPTIMIZER_STATE)).toBe(
          STATE_BYTES_PER_PARAM[precision][optimizer].optimizer,
        );
      }
    }
  });

  it('counts each part at its own width', () => {
    // Apex DistributedFusedAdam with dtype bf16: parameter shard, exp_avg, exp_avg_sq all bf16.
    expect(
      optimizerStateBytesPerParam('mixed', 'adam', { masterWeights: 'bf16', momentum: 'bf16', variance: 'bf16' }),
    ).toBe(6);
    // Megatron's precision-aware optimizer: int16 remainders + bf16 moments.
    expect(
      optimizerStateBytesPerParam('mixed', 'adam', { masterWeights: 'remainders', momentum: 'bf16', variance: 'bf16' }),
    ).toBe(6);
    expect(
      optimizerStateBytesPerParam('mixed', 'adam', { masterWeights: 'fp32', momentum: 'fp8', variance: 'fp8' }),
    ).toBe(6);
    expect(optimizerStateBytesPerParam('mixed', 'adam', BF16_MOMENTS)).toBe(8);
    // fp32 training has no master copy; SGD has no variance.
    expect(
      optimizerStateBytesPerParam('fp32', 'adam', { masterWeights: 'fp32', momentum: 'bf16', variance: 'fp8' }),
    ).toBe(3);
    expect(
      optimizerStateBytesPerParam('mixed', 'sgd', { masterWeights: 'fp16', momentum: 'bf16', variance: 'fp32' }),
    ).toBe(4);
  });

  it('sizes the update by what it reads and writes', () => {
    // All fp32 with 16-bit gradients: read master, m, v (12) + gradient (2), write master, m, v (12) + bf16 weight (2).
    expect(optimizerStepBytesPerParam('mixed', 'adam', 2)).toBe(28);
    expect(optimizerStepBytesPerParam('mixed', 'sgd', 2)).toBe(20);
    expect(optimizerStepBytesPerParam('fp32', 'adam', 4)).toBe(28);
    expect(optimizerStepBytesPerParam('fp32', 'sgd', 4)).toBe(20);
    // Megatron's fp32 main gradients read 4 bytes, not 2.
    expect(optimizerStepBytesPerParam('mixed', 'adam', 4)).toBe(30);
    // Remainders with bf16 moments and fp32 gradients: read remainder 2, bf16 weight 2, m 2, v 2, gradient 4 = 12;
    // write remainder 2, weight 2, m 2, v 2 = 8.
    expect(
      optimizerStepBytesPerParam('mixed', 'adam', 4, {
        masterWeights: 'remainders',
        momentum: 'bf16',
        variance: 'bf16',
      }),
    ).toBe(20);
    expect(
      optimizerOp(10, { gradientBytes: 4, state: { masterWeights: 'remainders', momentum: 'bf16', variance: 'bf16' } })
        .bytes,
    ).toBe(200);
  });

  it('says which parts are reduced', () => {
    expect(isReducedOptimizerState(undefined)).toBe(false);
    expect(isReducedOptimizerState(FP32_OPTIMIZER_STATE)).toBe(false);
    expect(isReducedOptimizerState(BF16_MOMENTS)).toBe(true);
    expect(describeOptimizerState(BF16_MOMENTS)).toBe('momentum bf16, variance bf16');
    expect(describeOptimizerState({ masterWeights: 'remainders', momentum: 'fp32', variance: 'fp8' })).toBe(
      'master remainders, variance fp8',
    );
  });

  it('shards the smaller state over the data-parallel ranks (ZeRO-1: 2P + 2P + K·P/N)', () => {
    const P = 5e9;
    const N = 2;
    const m = memoryPerGpu({
      model: modelPreset('gpt3-175b'),
      paramsPerRank: P,
      dp: N,
      zero: 1,
      precision: 'mixed',
      optimizer: 'adam',
      activationBytes: 0,
      bucketBytes: 0,
      optimizerBytesPerParam: optimizerStateBytesPerParam('mixed', 'adam', {
        masterWeights: 'bf16',
        momentum: 'bf16',
        variance: 'bf16',
      }),
    });
    expect(m.weightsBytes).toBe(2 * P);
    expect(m.gradientsBytes).toBe(2 * P);
    expect(m.optimizerBytes).toBe((6 * P) / N);
  });
});
