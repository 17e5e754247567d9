import type { StepParts, TimedRun } from './decompose.js';
import { fittedFamilies, microBatchesOf, timedRuns, type FittedFamily, type Outcome } from './families.js';
import { layerTimeFloor } from './layerTimeFloor.js';
import { perStepRates } from './perStepRate.js';
import type { VtrainRow } from './vtrain.js';

/** Which part of a row's time `partSwaps` replaces with the measured one. */
const PARTS = ['perLayer', 'perMicroBatch', 'perStep'] as const;
type Part = (typeof PARTS)[number];

/** What the parts say about the error of a set of rows (single-node, the families the four-part form fits). */
export interface PartAttribution {
  rows: number;
  /** MAPE of the predictions as they are, over all single-node rows. */
  mapePct: number;
  /** MAPE with one part of each fitted row's prediction replaced by the measured part (the others as predicted). */
  withMeasuredPartPct: Record<Part, number>;
  /** Distinct (hidden, tp, micro-batch) per-layer times behind the fitted rows. */
  layerTimes: number;
  /** Largest relative spread of a·pp over the (dp, pp) families of one (hidden, tp, micro-batch). */
  layerTimeSpreadPct: number;
}

const partMs = (p: StepParts, part: Part, r: VtrainRow): number => {
  const n = microBatchesOf(r);
  if (part === 'perLayer') return p.perLayerMicroBatchMs * r.layers * n;
  if (part === 'perMicroBatch') return p.perMicroBatchMs * n;
  return p.perStepMs(r.layers);
};

/**
 * How much of the single-node error each part carries: the MAPE with one part of every fitted row taken from the
 * measured fit instead of the predicted one (rows of families too small to fit keep their own error), and how many
 * distinct per-layer times the measured rows rest on (a × pp, compared across each (hidden, tp, micro-batch)'s
 * data- and pipeline-parallel families).
 */
export function attributeError(families: readonly FittedFamily[]): PartAttribution {
  const sums = { mape: 0, perLayer: 0, perMicroBatch: 0, perStep: 0 };
  let rows = 0;
  const layerTimes = new Map<string, number[]>();
  const pct = (ms: number, r: VtrainRow) => (100 * Math.abs(ms - r.measuredMs)) / r.measuredMs;
  for (const { rows: os, measured: m, predicted: p } of families) {
    for (const o of os) {
      const own = pct(o.predictedMs, o.row);
      sums.mape += own;
      for (const part of PARTS)
        sums[part] += m && p ? pct(o.predictedMs - partMs(p, part, o.row) + partMs(m, part, o.row), o.row) : own;
      rows++;
    }
    if (!m) continue;
    const r = os[0].row;
    const k = `${r.hidden}/${r.tp}/${r.microBatch}`;
    layerTimes.set(k, [...(layerTimes.get(k) ?? []), m.perLayerMicroBatchMs * r.pp]);
  }
  let spread = 0;
  for (const as of layerTimes.values()) {
    const mean = as.reduce((s, a) => s + a, 0) / as.length;
    for (const a of as) spread = Math.max(spread, Math.abs(a / mean - 1));
  }
  const mean = (x: number) => x / Math.max(1, rows);
  return {
    rows,
    mapePct: mean(sums.mape),
    withMeasuredPartPct: {
      perLayer: mean(sums.perLayer),
      perMicroBatch: mean(sums.perMicroBatch),
      perStep: mean(sums.perStep),
    },
    layerTimes: layerTimes.size,
    layerTimeSpreadPct: 100 * spread,
  };
}

/**
 * The `--decompose` table of `npm run validate`: for the single-node rows, grouped by (hidden, tp, pp, micro-batch),
 * the per-layer, per-micro-batch and per-step parts (decompose.ts) of the measured and of the predicted times. Each
 * (hidden, tp, pp, dp, micro-batch) family is fitted on its own (it has 12–24 layers and 1–16 micro-batches); the
 * table averages the families of a group. A 1F1B pipeline's time has the same form: a and b are then the slowest
 * stage's share per micro-batch, and the per-step part also holds the pipeline's fill and drain.
 */
export function decompositionLines(outcomes: readonly Outcome[]): string[] {
  const groups = new Map<string, number[][]>();
  // How exactly each family's times follow the four-part form: mean |fit − time| / time over the fitted rows.
  const residual = { measured: 0, predicted: 0, rows: 0 };
  const misfit = (rs: TimedRun[], parts: StepParts) =>
    rs.reduce(
      (a, r) =>
        a +
        Math.abs(
          parts.perLayerMicroBatchMs * r.layers * r.microBatches +
            parts.perMicroBatchMs * r.microBatches +
            parts.perStepMs(r.layers) -
            r.timeMs,
        ) /
          r.timeMs,
      0,
    );
  const families = fittedFamilies(outcomes);
  if (!families.some((fam) => fam.measured && fam.predicted))
    return [
      'decomposition: no single-node family to fit (it needs the single-node rows: leave out --only multi and --limit)',
    ];
  for (const { rows: os, measured: m, predicted: p } of families) {
    if (!m || !p) continue;
    residual.measured += misfit(
      timedRuns(os, (o) => o.row.measuredMs),
      m,
    );
    residual.predicted += misfit(
      timedRuns(os, (o) => o.predictedMs),
      p,
    );
    residual.rows += os.length;
    const r = os[0].row;
    const k = `h${r.hidden} tp${r.tp}${r.pp > 1 ? ` pp${r.pp}` : ''} mb${r.microBatch}`;
    const v = [
      m.perLayerMicroBatchMs,
      p.perLayerMicroBatchMs,
      m.perMicroBatchMs,
      p.perMicroBatchMs,
      m.perStepMs(24),
      p.perStepMs(24),
    ];
    groups.set(k, [...(groups.get(k) ?? []), v]);
  }
  const f = (x: number) => x.toFixed(2).padStart(7);
  const lines = [
    'decomposition, single node: ms measured / predicted (T = a·L·n + b·n + c0 + c1·L, fitted per (h, tp, pp, dp, mb);',
    "  with pp > 1, a and b are the slowest stage's per micro-batch and the per-step part holds the pipeline fill)",
    '  group                 a per layer·micro-batch   b per micro-batch    per step at L = 24',
  ];
  for (const [k, vs] of [...groups.entries()].sort()) {
    const mean = vs[0].map((_, i) => vs.reduce((s, v) => s + v[i], 0) / vs.length);
    lines.push(
      `  ${k.padEnd(20)} ${f(mean[0])} / ${f(mean[1])}     ` +
        `${f(mean[2])} / ${f(mean[3])}    ${f(mean[4])} / ${f(mean[5])}`,
    );
  }
  const pct = (x: number) => ((100 * x) / Math.max(1, residual.rows)).toFixed(3);
  lines.push(
    `  the four-part form fits each family's measured times within ${pct(residual.measured)}% ` +
      `and its predicted times within ${pct(residual.predicted)}% (mean |residual|, ${residual.rows} rows)`,
  );
  const at = attributeError(families);
  const p2 = (x: number) => `${x.toFixed(2)}%`;
  lines.push(
    `  which part carries the error: MAPE ${p2(at.mapePct)} over ${at.rows} rows; ` +
      'with the measured part in place of the predicted one,',
    `    per layer·micro-batch ${p2(at.withMeasuredPartPct.perLayer)}, ` +
      `per micro-batch ${p2(at.withMeasuredPartPct.perMicroBatch)}, per step ${p2(at.withMeasuredPartPct.perStep)}`,
    `  the measured rows rest on ${at.layerTimes} per-layer times, one per (h, tp, mb): ` +
      `a × pp agrees across each one's dp and pp families within ${at.layerTimeSpreadPct.toFixed(3)}%`,
  );
  const floor = layerTimeFloor(families);
  lines.push(
    `  the least MAPE on those ${floor.rows} rows with only the per-layer times changed, ` +
      'each growing with the micro-batch, at most in',
    '    proportion (the other fitted parts as measured; ' +
      `the order the measured times break costs this much): ${p2(floor.floorPct)}`,
  );
  const rates = perStepRates(families);
  if (rates.length > 0) {
    const f1 = (x: number) => x.toFixed(1);
    const pairs = rates.map((r) => `h${r.hidden} tp${r.tp} ${f1(r.measuredPsPerParam)} / ${f1(r.predictedPsPerParam)}`);
    lines.push(
      '  once-per-step time per layer parameter without data or pipeline parallelism ' +
        "(the optimizer's work), ps measured / predicted:",
      `    ${pairs.join(', ')}`,
    );
  }
  return lines;
}
