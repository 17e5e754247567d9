import { CollectiveService, runPhasesIdleNs } from '../sim/collectives/collectiveService.js';
import { Simulator } from '../sim/engine/simulator.js';
import type { Dtype, GpuSpec } from '../sim/hardware/types.js';
import { FlowNetwork } from '../sim/network/flowNetwork.js';
import { buildTopology } from '../sim/network/topology.js';
import { ProgramExecutor } from '../sim/program/executor.js';
import { Program } from '../sim/program/types.js';
import { opTimeNs } from '../sim/workload/kernelTime.js';
import { gemmOp, type Op } from '../sim/workload/ops.js';
import { measuredGroupCluster, profileGpu } from './applyProfile.js';
import { alphaBetaSeconds, type AlphaBetaFit } from './fitAlphaBeta.js';
import type { Profile } from './profile.js';
import { FitError } from './stats.js';
import type { BenchItem, CopyDirection, GemmDims } from './types.js';

/**
 * Simulates a validation workload with the profile: GEMMs through the kernel-time model with the measured GEMM
 * model and launch overhead; programs (GEMM chains, copies overlapping compute) as task graphs on compute and
 * copy streams run by the event engine; collectives as flows on a calibrated one-node topology.
 */

/** The α–β fit of a copy direction as the profile names it (h2h, d2d, h2d-pinned, …). */
export function copyFit(profile: Profile, direction: CopyDirection, pinned: boolean): AlphaBetaFit {
  const key = direction === 'h2d' || direction === 'd2h' ? `${direction}-${pinned ? 'pinned' : 'pageable'}` : direction;
  const fit = profile.fit.copies[key];
  if (!fit) throw new FitError(`the profile has no ${key} copy fit`);
  return fit;
}

/**
 * A measured GEMM as an op: the addons run C = A·B without transposes in column-major order (cuda_bench.cc
 * `cublasGemmEx(N, N, m, n, k)` with lda = m, ldb = k, ldc = m; the CPU kernel's fp32 has no alignment rule), so
 * the leading dimensions whose alignment counts are m and k, never n.
 */
export function benchGemmOp(name: string, g: GemmDims, dtype: Dtype): Op {
  return gemmOp(name, g.m, g.n, g.k, 1, dtype, undefined, [g.m, g.k]);
}

function singleDeviceExecutor(profile: Profile, program: Program): number {
  const topology = buildTopology(measuredGroupCluster(profile, 1, profile.fit.memoryBandwidthGBps));
  const sim = new Simulator();
  const net = new FlowNetwork(
    sim,
    topology.links.map((l) => l.bandwidthGBps),
  );
  return new ProgramExecutor(program, sim, net, new CollectiveService(topology)).run().makespanNs;
}

function programSeconds(profile: Profile, gpu: GpuSpec, item: Extract<BenchItem, { kind: 'program' }>): number {
  const p = new Program(1);
  const done: number[] = [];
  if (item.run !== 'copy') {
    item.gemms.forEach((g, i) =>
      done.push(
        p.local(
          0,
          'compute',
          'backward',
          `gemm${i}`,
          opTimeNs(benchGemmOp(`gemm${i}`, g, item.dtype), gpu, item.dtype),
        ),
      ),
    );
  }
  if (item.run !== 'compute' && item.copies.length > 0) {
    const fit = copyFit(profile, item.direction, true);
    item.copies.forEach((c, j) => {
      const deps = c.after >= 0 && done[c.after] !== undefined ? [done[c.after]] : [];
      p.local(
        0,
        'copy',
        item.direction === 'h2d' ? 'h2d' : 'd2h',
        `copy${j}`,
        Math.round(alphaBetaSeconds(fit, c.bytes) * 1e9),
        deps,
      );
    });
  }
  return singleDeviceExecutor(profile, p) / 1e9;
}

function collectiveSeconds(profile: Profile, item: Extract<BenchItem, { kind: 'collective' }>): number {
  const fit = profile.fit.collectives.find((c) => c.op === item.op && c.ranks === item.ranks);
  if (!fit) throw new FitError(`the profile has no fit for ${item.op} over ${item.ranks}`);
  const topology = buildTopology(measuredGroupCluster(profile, item.ranks, fit.busBandwidthGBps));
  const service = new CollectiveService(topology, {
    mode: 'aggregated',
    allReduceAlgorithm: 'ring',
    protocol: 'Simple',
  });
  const group = [...Array(item.ranks).keys()];
  const phases = service.phases(item.op, group, item.bytes, { algorithm: 'ring', protocol: 'Simple', predictedNs: 0 });
  // The latency is the measured one (the fit's α), spread over the phases as NCCL's model would spread its own.
  const modelNs = phases.reduce((a, ph) => a + ph.latencyNs * ph.repeat, 0);
  const scale = modelNs > 0 ? (fit.latencyS * 1e9) / modelNs : 0;
  const scaled = phases.map((ph) => ({ ...ph, latencyNs: Math.round(ph.latencyNs * scale) }));
  return runPhasesIdleNs(topology, scaled, item.bytes) / 1e9;
}

/** Predicted seconds for one operation of `item` (what one measured sample stands for). */
export function predictSeconds(profile: Profile, item: BenchItem, gpu: GpuSpec = profileGpu(profile).gpu): number {
  switch (item.kind) {
    case 'gemm':
      return opTimeNs(benchGemmOp('gemm', item, item.dtype), gpu, item.dtype) / 1e9;
    case 'program':
      return programSeconds(profile, gpu, item);
    case 'copy': {
      const p = new Program(1);
      p.local(
        0,
        'copy',
        'other',
        'copy',
        Math.round(alphaBetaSeconds(copyFit(profile, item.direction, item.pinned), item.bytes) * 1e9),
      );
      return singleDeviceExecutor(profile, p) / 1e9;
    }
    case 'collective':
      return collectiveSeconds(profile, item);
    case 'launch':
      return profile.fit.launchS;
  }
}
