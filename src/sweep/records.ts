import { VERSION } from '../version.js';
import type { ScaleRow } from './scaleMath.js';
import type { ScaleMode, SeriesPlan } from './scale.js';
import { shardText, type Shard, type SweepPoint } from './grid.js';
import { pickCommSettings, type CommSettings } from './commSettings.js';

/** The `format` tag of every line `scale --shard` writes. */
export const POINT_FORMAT = 'clustersim-scale-point/1';

/**
 * One line of a sharded sweep's output (JSON lines): one point, with what `merge` needs to check that
 * the parts belong together and to rebuild the table. `row` is the row before speedup and efficiency,
 * which depend on the smallest simulated size and so on the whole series.
 */
export interface PointRecord extends CommSettings {
  format: typeof POINT_FORMAT;
  /** clustersim version that simulated the point. */
  version: string;
  /** Fingerprint of the sweep (`sweepId`): the same for every part of one sweep. */
  sweep: string;
  mode: ScaleMode;
  /** Every scenario of the sweep (paths as given), in order; `series` indexes it. */
  scenarios: string[];
  /** Every GPU count of the sweep, ascending. */
  gpuCounts: number[];
  /** The part that wrote the line, `i/N`. */
  shard: string;
  /** Index of the point in table order, from 0: series × gpuCounts.length + position of `gpus`. */
  point: number;
  series: number;
  source: string;
  /** The scenario's name, and the tp, pp (and cp) the sweep holds fixed, as the table's heading shows them. */
  name: string;
  tp: number;
  pp: number;
  /** Context-parallel size; written only when above 1, as `scale --json` does. */
  cp?: number;
  // cpCommType, tpCommOverlap, tpCommOverlapSms (`CommSettings`) follow cp, each only where it applies.
  gpus: number;
  row: ScaleRow;
}

/** What every line of one part shares. */
export interface RecordContext {
  sweep: string;
  mode: ScaleMode;
  plans: readonly SeriesPlan[];
  gpuCounts: readonly number[];
  shard: Shard;
}

/** The line of one point. */
export function pointRecord(ctx: RecordContext, point: SweepPoint, row: ScaleRow): PointRecord {
  const plan = ctx.plans[point.series];
  return {
    format: POINT_FORMAT,
    version: VERSION,
    sweep: ctx.sweep,
    mode: ctx.mode,
    scenarios: ctx.plans.map((p) => p.source),
    gpuCounts: [...ctx.gpuCounts],
    shard: shardText(ctx.shard),
    point: point.index,
    series: point.series,
    source: plan.source,
    name: plan.name,
    tp: plan.tp,
    pp: plan.pp,
    ...(plan.cp > 1 ? { cp: plan.cp } : {}),
    ...pickCommSettings(plan),
    gpus: point.gpus,
    row,
  };
}

/** A part's lines: one JSON object per line, each ending in a newline (empty when the part has no points). */
export function recordLines(records: readonly PointRecord[]): string {
  return records.map((r) => `${JSON.stringify(r)}\n`).join('');
}
