import { fitStepParts, type StepParts, type TimedRun } from './decompose.js';
import type { VtrainRow } from './vtrain.js';

/**
 * The `--decompose` table of `npm run validate`: for the single-node rows, grouped by (hidden, tp, pp, micro-batch),
 * the per-layer, per-micro-batch and per-step parts (decompose.ts) of the measured and of the predicted times. Each
 * (hidden, tp, pp, dp, micro-batch) family is fitted on its own (it has 12–24 layers and 1–16 micro-batches); the
 * table averages the families of a group. A 1F1B pipeline's time has the same form: a and b are then the slowest
 * stage's share per micro-batch, and the per-step part also holds the pipeline's fill and drain.
 */
export function decompositionLines(outcomes: readonly { row: VtrainRow; predictedMs: number }[]): string[] {
  const families = new Map<string, { row: VtrainRow; predictedMs: number }[]>();
  for (const o of outcomes) {
    const r = o.row;
    if (r.group !== 'single') continue;
    const k = `${r.hidden}/${r.tp}/${r.pp}/${r.dp}/${r.microBatch}`;
    families.set(k, [...(families.get(k) ?? []), o]);
  }
  const groups = new Map<string, number[][]>();
  // How exactly each family's times follow the four-part form: mean |fit − time| / time over the fitted rows.
  const residual = { measured: 0, predicted: 0, rows: 0 };
  const misfit = (runs: TimedRun[], parts: StepParts) =>
    runs.reduce((a, r) => a + Math.abs(parts.perLayerMicroBatchMs * r.layers * r.microBatches + parts.perMicroBatchMs * r.microBatches + parts.perStepMs(r.layers) - r.timeMs) / r.timeMs, 0);
  for (const os of families.values()) {
    const runs = (pick: (o: { row: VtrainRow; predictedMs: number }) => number): TimedRun[] =>
      os.map((o) => ({ layers: o.row.layers, microBatches: o.row.globalBatch / (o.row.microBatch * o.row.dp), timeMs: pick(o) }));
    const m = fitStepParts(runs((o) => o.row.measuredMs));
    const p = fitStepParts(runs((o) => o.predictedMs));
    if (!m || !p) continue;
    residual.measured += misfit(runs((o) => o.row.measuredMs), m);
    residual.predicted += misfit(runs((o) => o.predictedMs), p);
    residual.rows += os.length;
    const r = os[0].row;
    const k = `h${r.hidden} tp${r.tp}${r.pp > 1 ? ` pp${r.pp}` : ''} mb${r.microBatch}`;
    const v = [m.perLayerMicroBatchMs, p.perLayerMicroBatchMs, m.perMicroBatchMs, p.perMicroBatchMs, m.perStepMs(24), p.perStepMs(24)];
    groups.set(k, [...(groups.get(k) ?? []), v]);
  }
  const f = (x: number) => x.toFixed(2).padStart(7);
  const lines = [
    'decomposition, single node: ms measured / predicted (T = a·L·n + b·n + c0 + c1·L, fitted per (h, tp, pp, dp, mb);',
    '  with pp > 1, a and b are the slowest stage\'s per micro-batch and the per-step part holds the pipeline fill)',
    '  group                 a per layer·micro-batch   b per micro-batch    per step at L = 24',
  ];
  for (const [k, vs] of [...groups.entries()].sort()) {
    const mean = vs[0].map((_, i) => vs.reduce((s, v) => s + v[i], 0) / vs.length);
    lines.push(`  ${k.padEnd(20)} ${f(mean[0])} / ${f(mean[1])}     ${f(mean[2])} / ${f(mean[3])}    ${f(mean[4])} / ${f(mean[5])}`);
  }
  const pct = (x: number) => ((100 * x) / Math.max(1, residual.rows)).toFixed(3);
  lines.push(`  the four-part form fits each family's measured times within ${pct(residual.measured)}% and its predicted times within ${pct(residual.predicted)}% (mean |residual|, ${residual.rows} rows)`);
  return lines;
}
