import { profileGpu } from './applyProfile.js';
import type { Backend } from './backends.js';
import { calibrationPlan } from './plan.js';
import { predictSeconds } from './predict.js';
import type { Profile } from './profile.js';
import { median, summarise, valueOf } from './stats.js';
import { validationCases, type CaseKind, type ValidationCase } from './validatePlan.js';
import type { PlannedItem } from './types.js';

/**
 * Predict-versus-measure: each held-out workload is measured for real on the profile's backend and simulated
 * with the profile. errorPct = 100 · (predicted − measured) / measured (positive: the simulator is slow), where
 * measured is the profile's statistic of the samples (median on CUDA, fastest on the CPU backend).
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
  /** Which value of the repeats "measured" is: median or min (fastest). */
  statistic: string;
  /** Cases that could not run or be predicted, with the reason. */
  skipped: { name: string; reason: string }[];
  /**
   * Drift: a few calibration measurements taken again before and after the cases, median of 100·(now/then − 1)
   * over them. Positive: the machine ran slower than when it was calibrated (other load, clocks, heat).
   */
  drift?: { beforePct: number; afterPct: number; anchors: string[] };
  /**
   * Median |error| once the drift (mean of before and after) is taken out of the predictions: how good the model
   * is apart from the machine having changed speed since calibration. Information only; --max-error uses the raw.
   */
  driftAdjustedMedianErrorPct?: number;
}

export interface ValidateOptions {
  backend: Backend;
  profile: Profile;
  quick: boolean;
  onProgress?: (done: number, total: number, next?: ValidationCase) => void;
  signal?: AbortSignal;
}

/** Summary of case results (exported for tests and for re-summarising saved results). */
export function summariseCases(
  results: readonly CaseResult[],
  meta: { backend: string; device: string; statistic?: string; skipped?: ValidationSummary['skipped'] },
): ValidationSummary {
  const abs = results.map((r) => Math.abs(r.errorPct));
  const worst = results.reduce<CaseResult | undefined>(
    (w, r) => (!w || Math.abs(r.errorPct) > Math.abs(w.errorPct) ? r : w),
    undefined,
  );
  return {
    cases: results.length,
    medianErrorPct: abs.length ? median(abs) : NaN,
    worstErrorPct: abs.length ? Math.max(...abs) : NaN,
    worstCase: worst?.name ?? '',
    medianSpreadPct: results.length ? median(results.map((r) => r.spreadPct)) : NaN,
    worstSpreadPct: results.length ? Math.max(...results.map((r) => r.spreadPct)) : NaN,
    backend: meta.backend,
    device: meta.device,
    statistic: meta.statistic ?? 'median',
    skipped: meta.skipped ?? [],
  };
}

/**
 * Calibration measurements to retake as drift anchors, one each of the GEMMs, copies and collectives: of those at
 * least as long as their kind's median (short ones are mostly launch jitter), the steadiest (smallest spread of its
 * repeats; the longer on a tie). Pageable copies are never anchors: they are staged through driver buffers in host
 * memory and vary from run to run by themselves (on the H200 the d2h-pageable fit missed its own points by 10% in
 * the median, where pinned copies fit within 1%), and no validation case uses them.
 */
export function anchorItems(profile: Profile, maxRanks: number): PlannedItem[] {
  const plan = calibrationPlan({ backend: profile.backend, quick: profile.quick, maxRanks });
  const then = new Map(profile.measurements.map((m) => [m.id, m]));
  const out: PlannedItem[] = [];
  for (const kind of ['gemm', 'copy', 'collective']) {
    const c = plan.filter((p) => p.item.kind === kind && then.has(p.id) && !(p.item.kind === 'copy' && !p.item.pinned));
    if (c.length === 0) continue;
    const time = (p: PlannedItem) => valueOf(then.get(p.id)!, profile.statistic);
    const medianTime = median(c.map(time));
    const steadiest = c
      .filter((p) => time(p) >= medianTime)
      .sort((a, b) => then.get(a.id)!.spreadPct - then.get(b.id)!.spreadPct || time(b) - time(a));
    out.push(steadiest[0]);
  }
  return out;
}

async function driftPct(o: ValidateOptions, anchors: PlannedItem[]): Promise<number> {
  const then = new Map(o.profile.measurements.map((m) => [m.id, valueOf(m, o.profile.statistic)]));
  const ratios: number[] = [];
  for (const a of anchors) {
    const now = valueOf(summarise((await o.backend.run(a.item)).samplesS), o.profile.statistic);
    ratios.push(100 * (now / then.get(a.id)! - 1));
  }
  return ratios.length ? median(ratios) : NaN;
}

export async function runValidation(
  o: ValidateOptions,
): Promise<{ cases: CaseResult[]; summary: ValidationSummary; interrupted: boolean }> {
  const cases = validationCases(o.backend.kind, o.quick, o.backend.maxRanks);
  const anchors = anchorItems(o.profile, o.backend.maxRanks);
  let beforePct = NaN;
  try {
    beforePct = await driftPct(o, anchors);
  } catch {
    // Drift is information only; a failing anchor must not stop validation.
  }
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
      const measuredS = valueOf(s, o.profile.statistic);
      results.push({
        name: c.name,
        kind: c.kind,
        predictedS,
        measuredS,
        errorPct: (100 * (predictedS - measuredS)) / measuredS,
        spreadPct: s.spreadPct,
      });
    } catch (err) {
      skipped.push({ name: c.name, reason: `measurement failed: ${(err as Error).message}` });
    }
  }
  let afterPct = NaN;
  if (!interrupted) afterPct = await driftPct(o, anchors).catch(() => NaN);
  o.onProgress?.(cases.length, cases.length);
  const summary = summariseCases(results, {
    backend: o.backend.kind,
    device: o.profile.device.name,
    statistic: o.profile.statistic,
    skipped,
  });
  if (anchors.length > 0) summary.drift = { beforePct, afterPct, anchors: anchors.map((a) => a.id) };
  const drifts = [beforePct, afterPct].filter(Number.isFinite);
  if (drifts.length > 0 && results.length > 0) {
    const f = 1 + drifts.reduce((a, b) => a + b, 0) / drifts.length / 100;
    summary.driftAdjustedMedianErrorPct = median(
      results.map((r) => Math.abs((100 * (r.predictedS * f - r.measuredS)) / r.measuredS)),
    );
  }
  return { cases: results, summary, interrupted };
}
