import type { StepOutcome } from './allSetsSummary.js';

/** One run measured in bf16 and in FP8 on the same cluster and split: the FP8 speed-up, measured and predicted. */
export interface Fp8Pair {
  label: string;
  measuredSpeedup: number;
  predictedSpeedup: number;
  /** (predicted − measured) / measured of the speed-up, %. */
  errorPct: number;
}

/** The FP8 speed-up target the FP8 issue sets: within 5% of the measured ratio. */
export const FP8_SPEEDUP_TOLERANCE_PCT = 5;

/** The pairs of a bf16 set's row and its FP8 set's row of the same label (the same scenario, GPUs and batch). */
export function fp8Pairs(outcomes: readonly StepOutcome[], bf16Set: string, fp8Set: string): Fp8Pair[] {
  const bf16 = new Map(outcomes.filter((o) => o.set === bf16Set).map((o) => [o.label, o]));
  return outcomes
    .filter((o) => o.set === fp8Set && bf16.has(o.label))
    .map((fp8) => {
      const base = bf16.get(fp8.label)!;
      const measuredSpeedup = base.measuredS / fp8.measuredS;
      const predictedSpeedup = base.predictedS / fp8.predictedS;
      return {
        label: fp8.label,
        measuredSpeedup,
        predictedSpeedup,
        errorPct: 100 * (predictedSpeedup / measuredSpeedup - 1),
      };
    });
}
