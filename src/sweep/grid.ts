import { createHash } from 'node:crypto';
import { VERSION } from '../version.js';
import type { ScaleMode, SeriesPlan } from './scale.js';

/**
 * One point of a sweep: a scenario (`series`, its index in the command line order) at one GPU count.
 * `index` numbers the points in table order — scenario by scenario, GPU counts ascending — from 0.
 */
export interface SweepPoint {
  index: number;
  series: number;
  gpus: number;
}

/** The most points (scenarios × GPU counts) one sweep may have: far more than a sweep that finishes would. */
export const MAX_SWEEP_POINTS = 100_000;

/** A sweep's points in table order: index = series × (GPU counts) + position of the GPU count. */
export function sweepGrid(seriesCount: number, gpuCounts: readonly number[]): SweepPoint[] {
  const points: SweepPoint[] = [];
  for (let series = 0; series < seriesCount; series++) {
    for (const gpus of gpuCounts) points.push({ index: points.length, series, gpus });
  }
  return points;
}

/**
 * A fingerprint of everything that decides a sweep's results: the tool's version, the mode, the GPU
 * counts, and each scenario's path and content after `--set` (16 hex digits of SHA-256). Parts of one
 * sweep run on different machines carry the same id; `merge` refuses to join parts whose ids differ.
 * Files a scenario refers to (an `hfConfig`) are named, not hashed.
 */
export function sweepId(
  plans: readonly Pick<SeriesPlan, 'source' | 'raw'>[],
  gpuCounts: readonly number[],
  mode: ScaleMode,
): string {
  const basis = JSON.stringify({
    version: VERSION,
    mode,
    gpuCounts,
    scenarios: plans.map((p) => ({ source: p.source, raw: p.raw })),
  });
  return createHash('sha256').update(basis).digest('hex').slice(0, 16);
}

/** Part `index` (1-based) of `count` parts. */
export interface Shard {
  index: number;
  count: number;
}

/** A `--shard` value that cannot be read; the message says what is expected. */
export class ShardSyntaxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ShardSyntaxError';
  }
}

/**
 * Reads `i/N` (1 ≤ i ≤ N), as a Slurm job array gives it with `--array=1-N`:
 * `$SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT`. Throws `ShardSyntaxError` otherwise.
 */
export function parseShard(text: string): Shard {
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(text);
  if (!m)
    throw new ShardSyntaxError(
      `'${text}' is not i/N; write the part and the number of parts, e.g. 2/8 for the second of eight`,
    );
  const index = Number(m[1]);
  const count = Number(m[2]);
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(count))
    throw new ShardSyntaxError(`'${text}': the numbers are too large`);
  if (count < 1) throw new ShardSyntaxError(`'${text}': N, the number of parts, must be at least 1`);
  if (index < 1)
    throw new ShardSyntaxError(
      `'${text}': parts count from 1 (1/${count} … ${count}/${count}); ` +
        `from a 0-based index (Kubernetes' JOB_COMPLETION_INDEX) write $((i + 1))/${count}`,
    );
  if (index > count)
    throw new ShardSyntaxError(
      `'${text}': part ${index} does not exist, there are only ${count} (1/${count} … ${count}/${count})`,
    );
  return { index, count };
}

/** `i/N`, as `parseShard` reads it. */
export function shardText(shard: Shard): string {
  return `${shard.index}/${shard.count}`;
}

/** Which part holds point `pointIndex`: round-robin, so every part gets small and large GPU counts alike. */
export function shardOf(pointIndex: number, count: number): number {
  return (pointIndex % count) + 1;
}

/**
 * The points of one part, round-robin over the table order: part i of N takes points i−1, i−1+N,
 * i−1+2N, … . The parts are disjoint and together hold every point once; a part may be empty when
 * there are more parts than points.
 */
export function shardPoints(points: readonly SweepPoint[], shard: Shard): SweepPoint[] {
  return points.filter((p) => shardOf(p.index, shard.count) === shard.index);
}
