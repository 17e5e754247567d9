import { describe, expect, it } from 'vitest';
import { attributeError } from '../../src/validation/decompositionReport.js';
import type { VtrainRow } from '../../src/validation/vtrain.js';
import { fittedFamilies } from '../../src/validation/families.js';

/** Rows of one (hidden, tp, mb) measured as a·L·n/pp + b·n + c, over dp 1–2 and pp 1–2. */
function rowsOf(a: number, b: number, c: number, predict: (r: VtrainRow, t: number) => number) {
  const out: { row: VtrainRow; predictedMs: number }[] = [];
  for (const pp of [1, 2]) {
    for (const dp of [1, 2]) {
      for (const layers of [12, 16, 20, 24]) {
        for (const globalBatch of [4, 8, 16]) {
          const n = globalBatch / dp;
          const measuredMs = (a * layers * n) / pp + b * n + c;
          const row: VtrainRow = {
            group: 'single',
            gpus: pp * dp,
            globalBatch,
            microBatch: 1,
            hidden: 1024,
            heads: 16,
            layers,
            seqLen: 1024,
            tp: 1,
            dp,
            pp,
            measuredMs,
          };
          out.push({ row, predictedMs: predict(row, measuredMs) });
        }
      }
    }
  }
  return out;
}

describe('attributeError (which part of the step carries the error)', () => {
  it('puts an error made only in the per-layer part there, and nowhere else', () => {
    // Predicted layer 10% fast: exact once the measured per-layer part replaces the predicted one.
    const outcomes = rowsOf(3, 7, 5, (r, t) => t - (0.3 * r.layers * (r.globalBatch / r.dp)) / r.pp);
    const at = attributeError(fittedFamilies(outcomes));
    expect(at.rows).toBe(outcomes.length);
    expect(at.mapePct).toBeGreaterThan(5);
    expect(at.withMeasuredPartPct.perLayer).toBeLessThan(1e-6);
    expect(at.withMeasuredPartPct.perMicroBatch).toBeCloseTo(at.mapePct, 6);
    expect(at.withMeasuredPartPct.perStep).toBeCloseTo(at.mapePct, 6);
  });

  it('counts one per-layer time behind families that share it, and measures their spread', () => {
    const shared = attributeError(fittedFamilies(rowsOf(3, 7, 5, (_, t) => t)));
    expect(shared.layerTimes).toBe(1);
    expect(shared.layerTimeSpreadPct).toBeLessThan(1e-6);
    // The pp-2 families' layers 20% slower than pp 1's: a × pp of the four families is 3, 3, 3.6, 3.6 (mean 3.3).
    const split = rowsOf(3, 7, 5, (_, t) => t).map((o) =>
      o.row.pp === 2
        ? {
            ...o,
            row: { ...o.row, measuredMs: o.row.measuredMs + 0.3 * o.row.layers * (o.row.globalBatch / o.row.dp) },
          }
        : o,
    );
    expect(attributeError(fittedFamilies(split)).layerTimeSpreadPct).toBeCloseTo((100 * 0.3) / 3.3, 6);
  });
});
