import { describe, expect, it } from 'vitest';
import { FITTED_CONSTANTS, fitGoldenSection, meanSquaredPct } from '../../src/validation/fittedConstants.js';
import {
  A100_PCIE_40GB,
  A100_SXM4_40GB,
  A100_SXM4_80GB,
  H100_SXM5_80GB,
  H200_SXM_141GB,
  V100_SXM2_32GB,
} from '../../src/sim/hardware/gpus.js';
import { SUSTAINED_GEMM_FRACTION } from '../../src/sim/hardware/sustainedGemm.js';

describe("the project's fitted constants", () => {
  it('finds the least mean squared error of a closed form', () => {
    // Errors of 100·(v − 0.93) and 100·(v − 0.95): least squares at their mean, 0.94.
    expect(fitGoldenSection((v) => [100 * (v - 0.93), 100 * (v - 0.95)])).toBe(0.94);
    expect(meanSquaredPct([3, -4])).toBe(12.5);
  });

  it.each(FITTED_CONSTANTS.map((c) => [c.name, c] as const))(
    '%s: the presets carry the fit on its training subset',
    (_, c) => {
      expect(fitGoldenSection(c.residualsAt)).toBe(c.value);
      // And the fit is what the constant is for: it takes the subset's error down from several percent.
      const rms = (e: number[]) => Math.sqrt(meanSquaredPct(e));
      expect(rms(c.residualsAt(c.value))).toBeLessThan(rms(c.residualsAt(1)) / 3);
    },
  );

  it('gives every Ampere preset the Ampere fraction and every Hopper preset the Hopper one; Volta has none', () => {
    for (const g of [A100_SXM4_40GB, A100_SXM4_80GB, A100_PCIE_40GB])
      expect(g.sustainedGemmFraction).toBe(SUSTAINED_GEMM_FRACTION.ampere);
    for (const g of [H100_SXM5_80GB, H200_SXM_141GB])
      expect(g.sustainedGemmFraction).toBe(SUSTAINED_GEMM_FRACTION.hopper);
    expect(V100_SXM2_32GB.sustainedGemmFraction).toBeUndefined();
  });
});
