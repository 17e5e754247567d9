import { describe, expect, it } from 'vitest';
import { fp8Pairs } from '../../src/validation/fp8Pairs.js';
import type { StepOutcome } from '../../src/validation/allSetsSummary.js';

const outcome = (set: string, label: string, measuredS: number, predictedS: number) =>
  ({ set, label, measuredS, predictedS }) as unknown as StepOutcome;

describe('FP8 pairs', () => {
  it('divide each bf16 row by the FP8 row of the same run, measured and predicted', () => {
    const pairs = fp8Pairs(
      [
        outcome('bf16', 'a on 8 GPUs', 12.78, 11.6),
        outcome('fp8', 'a on 8 GPUs', 9.44, 8.6),
        outcome('fp8', 'b on 16 GPUs', 2, 2), // no bf16 row of b: no pair
        outcome('other', 'a on 8 GPUs', 1, 1),
      ],
      'bf16',
      'fp8',
    );
    expect(pairs).toHaveLength(1);
    expect(pairs[0].measuredSpeedup).toBeCloseTo(12.78 / 9.44, 12);
    expect(pairs[0].predictedSpeedup).toBeCloseTo(11.6 / 8.6, 12);
    expect(pairs[0].errorPct).toBeCloseTo(100 * (11.6 / 8.6 / (12.78 / 9.44) - 1), 10);
  });
});
