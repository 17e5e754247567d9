import seedrandom from 'seedrandom';
import { fitProfile } from '../../src/calibrate/fit.js';
import { PROFILE_SCHEMA, PROFILE_SCHEMA_VERSION, type Profile } from '../../src/calibrate/profile.js';
import { summarise } from '../../src/calibrate/stats.js';
import type { BenchItem, MeasurementRecord } from '../../src/calibrate/types.js';
import { measuredGemmNs } from '../../src/sim/workload/kernelTime.js';
import type { MeasuredGemm } from '../../src/sim/hardware/types.js';

/** Synthetic measurements from known constants, with seeded multiplicative noise, for fitting tests. */

export function noisy(seed: string, relStd: number): () => number {
  const rng = seedrandom(seed);
  // Sum of four uniforms: roughly normal, bounded (no wild outliers); mean 1, standard deviation relStd.
  return () => 1 + relStd * Math.sqrt(3) * (rng() + rng() + rng() + rng() - 2);
}

export function record(
  id: string,
  item: BenchItem,
  seconds: number,
  noise: () => number,
  samples = 5,
): MeasurementRecord {
  const samplesS = Array.from({ length: samples }, () => seconds * noise());
  return {
    type: 'measurement',
    id,
    group: item.kind,
    item,
    samplesS,
    summary: summarise(samplesS),
    takenAt: '2025-01-01T00:00:00Z',
  };
}

export const TRUE_GEMM: MeasuredGemm = {
  tileM: 96,
  tileN: 128,
  units: 2,
  splitKMinK: 0,
  ceilingTflops: 0.05,
  smallKHalf: 24,
};
export const TRUE = {
  launchS: 3e-6,
  copyLatencyS: 2e-6,
  copyGBps: 8,
  allReduceLatencyS: 5e-6,
  allReduceAlgGBps: 4,
  allGatherLatencyS: 3e-6,
  allGatherAlgGBps: 9,
};

/** Records of a CPU-like calibration generated from TRUE and TRUE_GEMM. */
export function syntheticRecords(relStd = 0.02, seed = 'calib'): MeasurementRecord[] {
  const n = noisy(seed, relStd);
  const rep = { warmup: 1, repeats: 5, inner: 1 };
  const out: MeasurementRecord[] = [record('launch', { kind: 'launch', ...rep }, TRUE.launchS, n)];
  for (let b = 64 * 1024; b <= 64 * 2 ** 20; b *= 2) {
    out.push(
      record(
        `copy/h2h/${b}`,
        { kind: 'copy', direction: 'h2h', pinned: true, bytes: b, ...rep },
        TRUE.copyLatencyS + b / (TRUE.copyGBps * 1e9),
        n,
      ),
    );
    out.push(
      record(
        `collective/all_reduce/2/${b}`,
        { kind: 'collective', op: 'all_reduce', ranks: 2, bytes: b, ...rep },
        TRUE.allReduceLatencyS + b / (TRUE.allReduceAlgGBps * 1e9),
        n,
      ),
    );
    out.push(
      record(
        `collective/all_gather/2/${b}`,
        { kind: 'collective', op: 'all_gather', ranks: 2, bytes: b, ...rep },
        TRUE.allGatherLatencyS + b / (TRUE.allGatherAlgGBps * 1e9),
        n,
      ),
    );
  }
  for (const m of [64, 200, 512, 1024]) {
    for (const nn of [64, 300, 1024]) {
      for (const k of [32, 256, 1024]) {
        const s = measuredGemmNs({ m, n: nn, k, batch: 1 }, TRUE_GEMM) * 1e-9 + TRUE.launchS;
        out.push(record(`gemm/fp32/${m}x${nn}x${k}`, { kind: 'gemm', dtype: 'fp32', m, n: nn, k, ...rep }, s, n));
      }
    }
  }
  return out;
}

/** A complete, valid profile built from synthetic records (backend and device as given). */
export function syntheticProfile(
  opts: { backend?: 'cpu' | 'cuda'; device?: string; gpuPreset?: string; count?: number } = {},
): Profile {
  const records = syntheticRecords();
  const backend = opts.backend ?? 'cpu';
  const { fit } = fitProfile(records, {
    gemmLayout: () => ({ tileM: TRUE_GEMM.tileM, tileN: TRUE_GEMM.tileN, units: TRUE_GEMM.units, splitKMinK: 0 }),
  });
  if (backend === 'cuda') {
    fit.copies['h2d-pinned'] = { ...fit.copies.h2h, bandwidthGBps: 50 };
    fit.copies.d2d = { ...fit.copies.h2h, bandwidthGBps: 2000 };
    fit.memoryBandwidthGBps = 4000;
  }
  return {
    schema: PROFILE_SCHEMA,
    schemaVersion: PROFILE_SCHEMA_VERSION,
    createdAt: '2025-01-01T00:00:00Z',
    tool: { name: 'clustersim', version: 'test' },
    backend,
    quick: true,
    statistic: 'median',
    device: {
      name: opts.device ?? 'Test CPU',
      count: opts.count ?? 2,
      ...(opts.gpuPreset ? { gpuPreset: opts.gpuPreset } : {}),
    },
    machine: {
      hostname: 'test',
      os: 'linux',
      arch: 'x64',
      node: 'v20',
      cpu: { model: 'Test CPU', logicalCores: 2, memoryBytes: 8 * 2 ** 30, gemmIsa: 'generic' },
      computeThreads: 2,
    },
    noise: { medianSpreadPct: 1, p90SpreadPct: 2, worstSpreadPct: 3 },
    measurements: records.map((r) => ({ id: r.id, group: r.group, ...r.summary })),
    fit,
  };
}
