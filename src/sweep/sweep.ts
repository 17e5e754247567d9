import type { ScaleRow } from './scaleMath.js';
import {
  assembleSeries,
  largestSimulatedGpus,
  simulatePoint,
  type ScaleMode,
  type ScaleSeries,
  type SeriesPlan,
} from './scale.js';
import { shardPoints, sweepGrid, sweepId, type Shard, type SweepPoint } from './grid.js';
import { runPoints } from './pool.js';
import { pointRecord, type PointRecord } from './records.js';

export interface SweepRunOptions {
  /** Threads, this one included (1: every point in this thread). */
  jobs: number;
  /** Called as each point is done, in the order they finish. */
  onPoint?: (point: SweepPoint, row: ScaleRow) => void;
  /** Stops the sweep after the points in flight; a whole sweep marks the sizes left out (`INTERRUPTED_REASON`). */
  signal?: AbortSignal;
}

/** The reason of a size a Ctrl-C left unsimulated. */
export const INTERRUPTED_REASON = 'interrupted (Ctrl-C) before this size was simulated';

/**
 * Sweeps every scenario over the GPU counts on up to `jobs` threads. The series are the same as
 * `scaleSweep` gives one scenario at a time in one thread. With `keepLargest`, the first series carries
 * its largest simulated run (with its trace, for the report): kept as it ran when this thread simulated
 * it (this thread takes the largest point first), simulated once more here when a worker did (a trace is
 * too big to copy between threads, and a point simulates the same wherever it runs).
 */
export async function runScaleSweep(
  plans: readonly SeriesPlan[],
  gpuCounts: readonly number[],
  options: SweepRunOptions & { keepLargest?: boolean },
): Promise<{ series: ScaleSeries[]; workers: number; interrupted: boolean }> {
  const points = sweepGrid(plans.length, gpuCounts);
  let largest: ScaleSeries['largest'];
  const {
    rows: done,
    workers,
    interrupted,
  } = await runPoints(plans, points, {
    jobs: options.jobs,
    onPoint: options.onPoint,
    signal: options.signal,
    onRun: options.keepLargest
      ? (p, scenario, run) => {
          if (p.series === 0 && (!largest || p.gpus > largest.gpus)) largest = { gpus: p.gpus, scenario, run };
        }
      : undefined,
  });
  // Sizes a Ctrl-C left unsimulated are rows with that reason, so that what was done still reads as a table.
  const rows = points.map(
    (p, i) => done[i] ?? { gpus: p.gpus, status: 'interrupted' as const, reason: INTERRUPTED_REASON },
  );
  const per = gpuCounts.length;
  const series = plans.map((plan, s) => assembleSeries(plan, rows.slice(s * per, (s + 1) * per)));
  if (options.keepLargest && series.length > 0) {
    const gpus = largestSimulatedGpus(series[0].rows);
    if (gpus !== undefined && largest?.gpus !== gpus) {
      const again = simulatePoint(plans[0], gpus);
      largest = again.scenario && again.run ? { gpus, scenario: again.scenario, run: again.run } : undefined;
    }
    series[0].largest = largest;
  }
  return { series, workers, interrupted };
}

/**
 * Runs part `shard` of a sweep (round-robin over the points in table order, see `shardPoints`) and
 * returns its JSON-lines records, in point order. A part with no points returns none.
 */
export async function runScaleShard(
  plans: readonly SeriesPlan[],
  gpuCounts: readonly number[],
  mode: ScaleMode,
  shard: Shard,
  options: SweepRunOptions,
): Promise<{ records: PointRecord[]; points: number; workers: number; planned: number; interrupted: boolean }> {
  const all = sweepGrid(plans.length, gpuCounts);
  const mine = shardPoints(all, shard);
  const { rows, workers, interrupted } = await runPoints(plans, mine, options);
  const ctx = { sweep: sweepId(plans, gpuCounts, mode), mode, plans, gpuCounts, shard };
  // Interrupted, the points done are kept, in point order.
  const records = mine.flatMap((p, i) => (rows[i] === undefined ? [] : [pointRecord(ctx, p, rows[i])]));
  return { records, points: all.length, workers, planned: mine.length, interrupted };
}
