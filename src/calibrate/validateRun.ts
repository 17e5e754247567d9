import { profileGpu } from './applyProfile.js';
import type { Backend } from './backends.js';
import { predictSeconds } from './predict.js';
import type { Profile } from './profile.js';
import { median, summarise } from './stats.js';
import { validationCases, type CaseKind, type ValidationCase } from './validatePlan.js';

/**
 * Predict-versus-measure: each held-out workload is measured for real on the profile's backend and simulated
 * with the profile. errorPct = 100 · (predicted − measured) / measured (positive: the simulator is slow).
 */

export interface CaseResult {
  name: string;
  kind: CaseKind;
  predictedS: number;
  measuredS: number;
  errorPct: number;
  /** (max − min) / median of the measured samples, percent: how noisy this measurement was. */
  spreadPct: number;
}

export interface ValidationSummary {
  cases: number;
  /** Median and worst of |errorPct|. */
  medianErrorPct: number;
  worstErrorPct: number;
  worstCase: string;
  /** Median and worst measurement spread over the cases, percent. */
  medianSpreadPct: number;
  worstSpreadPct: number;
  backend: string;
  device: string;
  /** Cases that could not run or be predicted, with the reason. */
  skipped: { name: string; reason: string }[];
}

export interface ValidateOptions {
  backend: Backend;
  profile: Profile;
  quick: boolean;
  onProgress?: (done: number, total: number, next?: ValidationCase) => void;
  signal?: AbortSignal;
}

/** Summary of case results (exported for tests and for re-summarising saved results). */
export function summariseCases(results: readonly CaseResult[], meta: { backend: string; device: string; skipped?: ValidationSummary['skipped'] }): ValidationSummary {
  const abs = results.map((r) => Math.abs(r.errorPct));
  const worst = results.reduce<CaseResult | undefined>((w, r) => (!w || Math.abs(r.errorPct) > Math.abs(w.errorPct) ? r : w), undefined);
  return {
    cases: results.length,
    medianErrorPct: abs.length ? median(abs) : NaN,
    worstErrorPct: abs.length ? Math.max(...abs) : NaN,
    worstCase: worst?.name ?? '',
    medianSpreadPct: results.length ? median(results.map((r) => r.spreadPct)) : NaN,
    worstSpreadPct: results.length ? Math.max(...results.map((r) => r.spreadPct)) : NaN,
    backend: meta.backend,
    device: meta.device,
    skipped: meta.skipped ?? [],
  };
}

export async function runValidation(o: ValidateOptions): Promise<{ cases: CaseResult[]; summary: ValidationSummary; interrupted: boolean }> {
  const cases = validationCases(o.backend.kind, o.quick, o.backend.maxRanks);
  const gpu = profileGpu(o.profile).gpu;
  const results: CaseResult[] = [];
  const skipped: ValidationSummary['skipped'] = [];
  let interrupted = false;
  for (let i = 0; i < cases.length; i++) {
    const c = cases[i];
    if (o.signal?.aborted) {
      interrupted = true;
      break;
    }
    o.onProgress?.(i, cases.length, c);
    let predictedS: number;
    try {
      predictedS = predictSeconds(o.profile, c.item, gpu);
    } catch (err) {
      skipped.push({ name: c.name, reason: `cannot be simulated: ${(err as Error).message}` });
      continue;
    }
    try {
      const s = summarise((await o.backend.run(c.item)).samplesS);
      results.push({ name: c.name, kind: c.kind, predictedS, measuredS: s.medianS, errorPct: (100 * (predictedS - s.medianS)) / s.medianS, spreadPct: s.spreadPct });
    } catch (err) {
      skipped.push({ name: c.name, reason: `measurement failed: ${(err as Error).message}` });
    }
  }
  o.onProgress?.(cases.length, cases.length);
  return { cases: results, summary: summariseCases(results, { backend: o.backend.kind, device: o.profile.device.name, skipped }), interrupted };
}
