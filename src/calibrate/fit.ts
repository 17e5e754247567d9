import { busBandwidthFactor } from '../sim/collectives/busBandwidth.js';
import type { Dtype } from '../sim/hardware/types.js';
import { fitAlphaBeta } from './fitAlphaBeta.js';
import { fitGemm, type GemmFit, type GemmLayout } from './fitGemm.js';
import type { CollectiveFit, ProfileFit } from './profile.js';
import { FitError, median, valueOf } from './stats.js';
import type { MeasurementRecord, SampleStatistic } from './types.js';

/**
 * Turns measurements into the constants of a profile: launch overhead (median of the launch samples), α–β per
 * copy direction and per collective and group size, a GEMM model per dtype, the streaming-memory bandwidth and
 * the overlap of compute with copies. Each part is fitted from what the log holds; a missing part is skipped
 * with a warning, except the ones every profile needs (launch, a memory copy, one GEMM dtype).
 */

export interface FitContext {
  /** How GEMMs of `dtype` are tiled and spread on this device (not fitted). */
  gemmLayout(dtype: Dtype): GemmLayout;
  /** Which value of each measurement to fit (default: the median). */
  statistic?: SampleStatistic;
}

/** Key of a copy record: h2h, d2d, h2d-pinned, d2h-pageable, … */
export function copyKey(r: MeasurementRecord): string | undefined {
  const it = r.item;
  if (it.kind !== 'copy') return undefined;
  return it.direction === 'h2d' || it.direction === 'd2h'
    ? `${it.direction}-${it.pinned ? 'pinned' : 'pageable'}`
    : it.direction;
}

function groupBy<T>(items: T[], key: (t: T) => string | undefined): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const t of items) {
    const k = key(t);
    if (k !== undefined) m.set(k, [...(m.get(k) ?? []), t]);
  }
  return m;
}

export function fitProfile(
  records: readonly MeasurementRecord[],
  ctx: FitContext,
): { fit: ProfileFit; warnings: string[] } {
  const warnings: string[] = [];
  const statistic = ctx.statistic ?? 'median';
  const t = (r: MeasurementRecord) => valueOf(r.summary, statistic);
  const launch = records.find((r) => r.item.kind === 'launch');
  if (!launch) throw new FitError('no launch-overhead measurement to fit (the log has no "launch" record)');
  const launchS = t(launch);

  const copies: ProfileFit['copies'] = {};
  for (const [key, rs] of groupBy([...records], copyKey)) {
    const item = (r: MeasurementRecord) => r.item as { bytes: number };
    try {
      copies[key] = fitAlphaBeta(rs.map((r) => ({ bytes: item(r).bytes, seconds: t(r) })));
    } catch (err) {
      warnings.push(`copy ${key}: ${(err as Error).message}`);
    }
  }
  const stream = copies.d2d ?? copies.h2h;
  if (!stream) throw new FitError('no device (d2d) or host (h2h) copy measurements to fit the memory bandwidth from');

  const gemm: Partial<Record<Dtype, GemmFit>> = {};
  const gemmRecords = groupBy([...records], (r) => (r.item.kind === 'gemm' ? r.item.dtype : undefined));
  for (const [dtype, rs] of gemmRecords) {
    const points = rs.map((r) => {
      const it = r.item as { m: number; n: number; k: number };
      // The simulator adds the launch overhead to every kernel, so the model is fitted without it.
      return { m: it.m, n: it.n, k: it.k, seconds: Math.max(t(r) - launchS, t(r) * 0.05) };
    });
    try {
      gemm[dtype as Dtype] = fitGemm(points, ctx.gemmLayout(dtype as Dtype));
    } catch (err) {
      warnings.push(`gemm ${dtype}: ${(err as Error).message}`);
    }
  }
  if (Object.keys(gemm).length === 0) throw new FitError('no GEMM measurements could be fitted');

  const collectives: CollectiveFit[] = [];
  const byGroup = groupBy([...records], (r) =>
    r.item.kind === 'collective' ? `${r.item.op}/${r.item.ranks}` : undefined,
  );
  for (const [key, rs] of byGroup) {
    const it0 = rs[0].item as { op: CollectiveFit['op']; ranks: number };
    try {
      const ab = fitAlphaBeta(rs.map((r) => ({ bytes: (r.item as { bytes: number }).bytes, seconds: t(r) })));
      collectives.push({
        op: it0.op,
        ranks: it0.ranks,
        ...ab,
        busBandwidthGBps: ab.bandwidthGBps * busBandwidthFactor(it0.op, it0.ranks),
      });
    } catch (err) {
      warnings.push(`collective ${key}: ${(err as Error).message}`);
    }
  }
  collectives.sort((a, b) => a.op.localeCompare(b.op) || a.ranks - b.ranks);

  const fit: ProfileFit = { launchS, memoryBandwidthGBps: 2 * stream.bandwidthGBps, copies, gemm, collectives };
  if (launch.extra?.hostLaunchS !== undefined) fit.launchHostS = launch.extra.hostLaunchS;
  const ov = (run: string) => {
    const r = records.find((x) => x.id === `overlap/${run}`);
    return r ? t(r) : undefined;
  };
  const [computeS, copyS, bothS] = [ov('compute'), ov('copy'), ov('both')];
  if (computeS && copyS && bothS)
    fit.overlap = { computeS, copyS, bothS, slowdownPct: 100 * (bothS / Math.max(computeS, copyS) - 1) };
  return { fit, warnings };
}

/** Noise of a set of measurements: median, 90th percentile and worst of their spreads (max − min over median). */
export function noiseOf(records: readonly MeasurementRecord[]): {
  medianSpreadPct: number;
  p90SpreadPct: number;
  worstSpreadPct: number;
} {
  if (records.length === 0) return { medianSpreadPct: 0, p90SpreadPct: 0, worstSpreadPct: 0 };
  const s = records.map((r) => r.summary.spreadPct).sort((a, b) => a - b);
  return {
    medianSpreadPct: median(s),
    p90SpreadPct: s[Math.min(s.length - 1, Math.floor(0.9 * s.length))],
    worstSpreadPct: s[s.length - 1],
  };
}
