/**
 * How the cost of simulating one step grows: the same Llama-3-70B layout (TP 8 and PP 8 inside and across
 * DGX H100 nodes, ZeRO-1 over the data-parallel replicas) at 64 … 16,384 GPUs with 16 micro-batches per
 * replica, and at 1,024 GPUs with 8 … 128 micro-batches. `npm run bench -- --growth` runs them and prints
 * the exponent b of wall ∝ x^b (least squares on log–log), so the growth law is visible at a glance.
 */

export type GrowthSeries = 'gpus' | 'microBatches';

export interface GrowthCase {
  title: string;
  series: GrowthSeries;
  /** The swept quantity: GPU count or micro-batches per replica. */
  x: number;
  raw: Record<string, unknown>;
}

const TP = 8;
const PP = 8;

function growthScenario(gpus: number, microBatchesPerReplica: number): Record<string, unknown> {
  const dp = gpus / (TP * PP);
  return {
    cluster: { preset: 'dgx-h100', nodes: gpus / 8 },
    model: { preset: 'llama3-70b', seqLen: 4096 },
    training: { globalBatch: dp * microBatchesPerReplica, microBatch: 1, precision: 'bf16' },
    parallel: { tp: TP, pp: PP, schedule: '1f1b', sequenceParallel: true, zero: 1, recompute: 'selective' },
  };
}

export const GROWTH_GPU_COUNTS = [64, 256, 1024, 4096, 16384];
export const GROWTH_MICRO_BATCHES = [8, 16, 32, 64, 128];

export const GROWTH_CASES: Record<string, GrowthCase> = Object.fromEntries([
  ...GROWTH_GPU_COUNTS.map((g) => [
    `growth-gpus-${g}`,
    {
      title: `growth: Llama-3-70B TP 8 PP 8, ${g.toLocaleString('en-US')} GPUs, 16 micro-batches`,
      series: 'gpus' as const,
      x: g,
      raw: growthScenario(g, 16),
    },
  ]),
  ...GROWTH_MICRO_BATCHES.map((m) => [
    `growth-mb-${m}`,
    {
      title: `growth: Llama-3-70B TP 8 PP 8, 1,024 GPUs, ${m} micro-batches`,
      series: 'microBatches' as const,
      x: m,
      raw: growthScenario(1024, m),
    },
  ]),
]);

/** Least-squares slope of log(y) against log(x): y ∝ x^slope. NaN with fewer than two points. */
export function logLogSlope(points: readonly { x: number; y: number }[]): number {
  const n = points.length;
  if (n < 2) return NaN;
  const lx = points.map((p) => Math.log(p.x));
  const ly = points.map((p) => Math.log(p.y));
  const mx = lx.reduce((a, b) => a + b, 0) / n;
  const my = ly.reduce((a, b) => a + b, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (let i = 0; i < n; i++) {
    sxy += (lx[i] - mx) * (ly[i] - my);
    sxx += (lx[i] - mx) ** 2;
  }
  return sxy / sxx;
}
