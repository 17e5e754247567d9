import { bandOf, type ErrorBand, type Residual } from '../accuracy/errorBand.js';
import type { SetupKind } from '../accuracy/setupKind.js';
import { rankingSummary, type RankingSummary } from './ranking.js';
import { mape, meanSignedErrorPct } from './vtrain.js';
import { STEP_SETS, type StepSetName, type StepTask } from './stepSets.js';
import type { StepPrediction } from './stepTaskPredict.js';

/** A predicted row of `validate --all`: the task, its prediction and the signed error of the step time in percent. */
export type StepOutcome = StepTask & StepPrediction & { errorPct: number };

export function stepOutcome(task: StepTask, p: StepPrediction): StepOutcome {
  return { ...task, ...p, errorPct: (100 * (p.predictedS - task.measuredS)) / task.measuredS };
}

export interface SetFigures {
  set: string;
  rows: number;
  mapePct: number;
  /** Mean of (predicted − measured) / measured in percent: negative, predictions too fast. */
  meanSignedErrorPct: number;
  worst: { label: string; errorPct: number };
}

/** Rows, MAPE, signed mean and worst row of one set's outcomes. */
export function setFigures(
  set: string,
  outcomes: readonly { label: string; errorPct: number; measuredS: number; predictedS: number }[],
): SetFigures {
  const worst = outcomes.reduce((w, o) => (Math.abs(o.errorPct) > Math.abs(w.errorPct) ? o : w));
  return {
    set,
    rows: outcomes.length,
    mapePct: mape(outcomes.map((o) => ({ predicted: o.predictedS, measured: o.measuredS }))),
    meanSignedErrorPct: meanSignedErrorPct(outcomes),
    worst: { label: worst.label, errorPct: worst.errorPct },
  };
}

/** The kinds the residuals hold, each with the band of its own rows (what simulate shows for that kind). */
export function bandsByKind(residuals: readonly Residual[]): { kind: SetupKind; band: ErrorBand }[] {
  const byKey = new Map<string, Residual[]>();
  for (const r of residuals) {
    const k = JSON.stringify([
      r.kind.gpu,
      r.kind.style,
      r.kind.scale,
      r.kind.host,
      r.kind.fp8 === true,
      r.kind.moe === true,
    ]);
    byKey.set(k, [...(byKey.get(k) ?? []), r]);
  }
  return [...byKey.keys()].sort().map((k) => {
    const rows = byKey.get(k)!;
    return { kind: rows[0].kind, band: bandOf(rows, ['gpu', 'style', 'scale', 'host']) };
  });
}

export interface AllSetsSummary {
  sets: SetFigures[];
  ranking: ({ set: StepSetName } & RankingSummary)[];
  bands: { kind: SetupKind; band: ErrorBand }[];
}

export function allSetsSummary(outcomes: readonly StepOutcome[]): AllSetsSummary {
  const present = STEP_SETS.filter((s) => outcomes.some((o) => o.set === s));
  const of = (s: StepSetName) => outcomes.filter((o) => o.set === s);
  return {
    sets: present.map((s) => setFigures(s, of(s))),
    ranking: present.flatMap((s) => {
      const r = rankingSummary(of(s), (o) => o.rankGroup);
      return r ? [{ set: s, ...r }] : [];
    }),
    bands: bandsByKind(outcomes),
  };
}
