import { fitStepParts, type StepParts, type TimedRun } from './decompose.js';
import type { VtrainRow } from './vtrain.js';

/** One predicted row of the measurement set. */
export type Outcome = { row: VtrainRow; predictedMs: number };

/** Micro-batches of one step on one data-parallel rank. */
export const microBatchesOf = (r: VtrainRow): number => r.globalBatch / (r.microBatch * r.dp);

/** A family's rows as timed runs of the four-part form (decompose.ts), with the time `pick` takes from each. */
export const timedRuns = (os: readonly Outcome[], pick: (o: Outcome) => number): TimedRun[] =>
  os.map((o) => ({ layers: o.row.layers, microBatches: microBatchesOf(o.row), timeMs: pick(o) }));

/** The single-node rows grouped into families: same hidden size, tp, pp, dp and micro-batch size. */
export function singleNodeFamilies(outcomes: readonly Outcome[]): Outcome[][] {
  const families = new Map<string, Outcome[]>();
  for (const o of outcomes) {
    const r = o.row;
    if (r.group !== 'single') continue;
    const k = `${r.hidden}/${r.tp}/${r.pp}/${r.dp}/${r.microBatch}`;
    families.set(k, [...(families.get(k) ?? []), o]);
  }
  return [...families.values()];
}

/**
 * A single-node family with the four-part fits of its measured and of its predicted times (undefined: too small to
 * fit).
 */
export interface FittedFamily {
  rows: Outcome[];
  measured?: StepParts;
  predicted?: StepParts;
}

/** `singleNodeFamilies`, each fitted on its measured and on its predicted times. */
export function fittedFamilies(outcomes: readonly Outcome[]): FittedFamily[] {
  return singleNodeFamilies(outcomes).map((rows) => ({
    rows,
    measured: fitStepParts(timedRuns(rows, (o) => o.row.measuredMs)),
    predicted: fitStepParts(timedRuns(rows, (o) => o.predictedMs)),
  }));
}
