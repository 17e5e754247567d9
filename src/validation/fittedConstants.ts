import { fileURLToPath } from 'node:url';
import { readFileSync } from 'node:fs';
import { resolveScenario } from '../scenario/resolve.js';
import { simulateStep } from '../sim/simulateStep.js';
import { H200_SXM_141GB } from '../sim/hardware/gpus.js';
import { SUSTAINED_GEMM_FRACTION } from '../sim/hardware/sustainedGemm.js';
import { llamaLayerComparisons } from './h200Kernels.js';
import { parseMegatronSp22Csv, table4LayerMs, TABLE4_LAYER_MS, type Table4Experiment } from './megatronSp22.js';

/**
 * The project's fitted constants: what each is fitted on (a declared training subset, never a validation set of step
 * times), how its residuals on that subset are computed for a candidate value, and the fit. `npm run validate --
 * --fit` prints each fit; `--all` lists them; a test holds the values in the presets to the fit.
 */
export interface FittedConstant {
  name: string;
  /** The value the presets carry. */
  value: number;
  /** The training subset, in words. */
  fittedOn: string;
  /** The sets of step times that share a source with the training subset (reported, but not fully out of sample). */
  sharesSourceWith: string[];
  /** Percent errors, (predicted − measured) / measured, on the training subset at a candidate value. */
  residualsAt(value: number): number[];
}

const sp22File = () => fileURLToPath(new URL('../../test/validation/megatron-sp22-table5.csv', import.meta.url));
const h200File = (name: string) => fileURLToPath(new URL(`../../reports/calibration/h200/${name}`, import.meta.url));

/** Korthikanti et al. Table 4 (one 22B layer on A100 80 GB) with the A100's sustained GEMM fraction at `f`. */
function table4Residuals(f: number): number[] {
  const row22b = parseMegatronSp22Csv(readFileSync(sp22File(), 'utf8')).rows[0];
  const resolve = (raw: Record<string, unknown>, name: string, dir: string) =>
    resolveScenario(
      { ...raw, cluster: { ...(raw.cluster as object), gpu: { preset: 'a100-sxm4-80gb', sustainedGemmFraction: f } } },
      name,
      dir,
    );
  const ms = table4LayerMs(row22b, (s) => simulateStep(s).result.stepTimeS * 1e3, resolve);
  return (Object.keys(TABLE4_LAYER_MS) as Table4Experiment[]).map(
    (k) => (100 * (ms[k] - TABLE4_LAYER_MS[k])) / TABLE4_LAYER_MS[k],
  );
}

/** The eager Llama layers measured on one H200 with the H200's sustained GEMM fraction at `f`. */
function h200LayerResiduals(f: number): number[] {
  return llamaLayerComparisons(h200File('llama-layer.json'), 'eager', {
    ...H200_SXM_141GB,
    sustainedGemmFraction: f,
  }).map((r) => r.errorPct);
}

export const FITTED_CONSTANTS: readonly FittedConstant[] = [
  {
    name: 'sustained GEMM fraction, Ampere (A100)',
    value: SUSTAINED_GEMM_FRACTION.ampere,
    fittedOn: "Korthikanti et al. 2022 Table 4: one 22B layer's forward + backward on A100 80 GB, 5 settings",
    sharesSourceWith: ['megatron-sp22'],
    residualsAt: table4Residuals,
  },
  {
    name: 'sustained GEMM fraction, Hopper (H100, H200)',
    value: SUSTAINED_GEMM_FRACTION.hopper,
    fittedOn: 'eager Llama-2-7B and Llama-3-8B layers, forward and backward, measured on one H200 (4 timings)',
    sharesSourceWith: ['h200-kernels'],
    residualsAt: h200LayerResiduals,
  },
];

/** Mean of squared relative errors (percent²): what the fit minimises. */
export const meanSquaredPct = (errors: readonly number[]): number =>
  errors.reduce((a, e) => a + e * e, 0) / errors.length;

/** The fit's resolution: values are rounded to it, and a value is a fit when neither neighbour at it does better. */
export const FIT_STEP = 0.001;

/**
 * The value in [lo, hi] with the least mean squared relative error, by golden-section search (the error is unimodal in
 * a fraction that scales the GEMM time), rounded to `FIT_STEP`.
 */
export function fitGoldenSection(residualsAt: (value: number) => number[], lo = 0.8, hi = 1.0): number {
  const score = (v: number) => meanSquaredPct(residualsAt(v));
  const ratio = (Math.sqrt(5) - 1) / 2;
  let [a, b] = [lo, hi];
  let c = b - ratio * (b - a);
  let d = a + ratio * (b - a);
  let [fc, fd] = [score(c), score(d)];
  while (b - a > FIT_STEP / 4) {
    if (fc <= fd) {
      [b, d, fd] = [d, c, fc];
      c = b - ratio * (b - a);
      fc = score(c);
    } else {
      [a, c, fc] = [c, d, fd];
      d = a + ratio * (b - a);
      fd = score(d);
    }
  }
  return Number((Math.round((a + b) / 2 / FIT_STEP) * FIT_STEP).toFixed(3));
}
