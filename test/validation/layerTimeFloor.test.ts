import { describe, expect, it } from 'vitest';
import { GRID_STEP, layerTimeFloor } from '../../src/validation/layerTimeFloor.js';
import { perStepRates } from '../../src/validation/perStepRate.js';
import type { VtrainRow } from '../../src/validation/vtrain.js';
import { fittedFamilies } from '../../src/validation/families.js';

/**
 * The grid's step bounds how far the floor found can lie above the exact one: one step of relative error per
 * row, in %.
 */
const gridPct = 100 * (GRID_STEP - 1);

/** Rows of one (hidden, tp, micro-batch) family at dp 1, pp 1: measured a·L·n + c1·L, predicted as measured. */
function family(microBatch: number, a: number, c1 = 0, hidden = 1024, tp = 1) {
  const out: { row: VtrainRow; predictedMs: number }[] = [];
  for (const layers of [12, 16, 20, 24]) {
    for (const n of [1, 2, 4, 8]) {
      const measuredMs = a * layers * n + c1 * layers;
      out.push({
        row: {
          group: 'single',
          gpus: tp,
          globalBatch: n * microBatch,
          microBatch,
          hidden,
          heads: 16,
          layers,
          seqLen: 1024,
          tp,
          dp: 1,
          pp: 1,
          measuredMs,
        },
        predictedMs: measuredMs,
      });
    }
  }
  return out;
}

describe('layerTimeFloor (the least error of a model whose layer time grows with the work)', () => {
  it('is zero when the measured layer times already grow with the micro-batch, at most in proportion', () => {
    const f = layerTimeFloor(fittedFamilies([...family(1, 3), ...family(2, 4), ...family(4, 7.5)]));
    expect(f.rows).toBe(48);
    expect(f.floorPct).toBeLessThan(gridPct);
  });

  it(
    'a layer over two samples measured faster than over one: ' +
      'the best common time is the faster one (1/4 of the rows at 4 ms off by 25%)',
    () => {
      // |t − 4|/4 + |t − 3|/3 over t in [3, 4] is least at t = 3: 0.25 on half the rows.
      const f = layerTimeFloor(fittedFamilies([...family(1, 4), ...family(2, 3)]));
      expect(Math.abs(f.floorPct - 12.5)).toBeLessThan(gridPct);
      expect(f.cells[0].perLayerMs[1]).toBeCloseTo(3, 1);
      expect(f.cells[0].perLayerMs[2]).toBeCloseTo(3, 1);
    },
  );

  it(
    'a layer over two samples measured at three times one: ' +
      'the two-sample time comes down to twice the one-sample time',
    () => {
      // (x − 1) + (3 − 2x)/3 over x in [1, 1.5] is least at x = 1: a third on half the rows.
      const f = layerTimeFloor(fittedFamilies([...family(1, 1), ...family(2, 3)]));
      expect(Math.abs(f.floorPct - 100 / 6)).toBeLessThan(gridPct);
      expect(f.cells[0].perLayerMs[2]).toBeCloseTo(2, 1);
    },
  );
});

describe('perStepRates (once-per-step time per layer parameter)', () => {
  it('divides the per-layer per-step time by the parameters a layer holds on a rank', () => {
    const h = 1024;
    const tp = 2;
    // Megatron's GPT layer: QKV, projection and both MLP weights split over TP with the QKV and fc1 biases; the
    // projection and fc2 biases and both LayerNorms (weight and bias) held whole.
    const layerParams = (12 * h * h + 7 * h) / tp + 6 * h;
    const rows = family(1, 3, 0.5, h, tp).map((o) => ({ ...o, predictedMs: o.predictedMs - 0.1 * o.row.layers }));
    const [rate] = perStepRates(fittedFamilies(rows));
    expect(rate.layerParams).toBe(layerParams);
    expect(rate.measuredPsPerParam).toBeCloseTo((0.5 * 1e9) / layerParams, 6);
    expect(rate.predictedPsPerParam).toBeCloseTo((0.4 * 1e9) / layerParams, 6);
  });
});
