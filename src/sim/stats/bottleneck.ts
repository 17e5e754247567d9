import type { TaskKind } from '../program/types.js';
import type { ExposureRow } from './exposure.js';
import type { HostMemory } from '../memory/hostMemory.js';

/** What bounds a step, with its share of the step time. */
export interface Bottleneck {
  bound: 'memory' | 'compute' | 'exposed communication' | 'latency of small collectives' | 'pipeline bubble' | 'optimizer on the host' | 'idle (load imbalance)';
  /** Fraction of the step time (for memory: the shortfall as a fraction of capacity). */
  share: number;
  detail: string;
  /** Exposed communication by traffic and wire, largest first. */
  exposure: ExposureRow[];
}

const TRAFFIC: Partial<Record<TaskKind, string>> = {
  'dp-allreduce': 'data-parallel gradient all-reduce',
  'dp-reducescatter': 'gradient reduce-scatter',
  'dp-allgather': 'all-gather of the updated weights',
  'tp-collective': 'tensor-parallel collectives',
  'cp-exchange': 'context-parallel exchanges',
  'pp-send': 'pipeline sends',
  'zero-gather': 'ZeRO-3 weight gathers',
  h2d: 'host-to-device copies',
  d2h: 'device-to-host copies',
};

const WIRE = { nvlink: 'NVLink', pcie: 'PCIe', network: 'the network' };

/** Human name of a traffic row: "tensor-parallel collectives over NVLink". */
export function trafficName(row: ExposureRow): string {
  return `${TRAFFIC[row.kind] ?? row.kind} over ${WIRE[row.medium]}`;
}

export interface StepShares {
  stepTimeS: number;
  computeS: number;
  exposedCommS: number;
  bubbleS: number;
  /** The optimizer step on the host (CPU offload) while the GPUs wait. */
  hostOptimizerS: number;
  idleS: number;
  fits: boolean;
  shortfallBytes: number;
  capacityBytes: number;
  /** With CPU offload, the fullest node's host memory (`hostMemoryPerNode`). */
  host?: HostMemory;
}

/**
 * Names what bounds the step: memory if it does not fit; otherwise the largest of exposed
 * communication (named by traffic and wire; "latency of small collectives" when most of it is
 * collectives under 1 MiB), pipeline bubble and idle time, if it takes at least 10% of the step;
 * otherwise compute.
 */
export function diagnose(s: StepShares, exposure: ExposureRow[]): Bottleneck {
  if (!s.fits) {
    return { bound: 'memory', share: s.shortfallBytes / s.capacityBytes, detail: `does not fit: ${(s.shortfallBytes / 2 ** 30).toFixed(1)} GiB short per GPU`, exposure };
  }
  const h = s.host;
  if (h?.fits === false) {
    return { bound: 'memory', share: h.shortfallBytes / h.capacityBytes!, detail: `the offloaded optimizer state does not fit in host memory: ${(h.shortfallBytes / 2 ** 30).toFixed(1)} GiB short per node`, exposure };
  }
  const candidates: [Bottleneck['bound'], number][] = [
    ['exposed communication', s.exposedCommS],
    ['pipeline bubble', s.bubbleS],
    ['optimizer on the host', s.hostOptimizerS],
    ['idle (load imbalance)', s.idleS],
  ];
  candidates.sort((a, b) => b[1] - a[1]);
  const [bound, time] = candidates[0];
  const share = time / s.stepTimeS;
  if (share < 0.1) return { bound: 'compute', share: s.computeS / s.stepTimeS, detail: 'the GPUs compute most of the time; faster kernels or more GPUs are what helps', exposure };
  if (bound === 'exposed communication' && exposure.length > 0) {
    const top = exposure[0];
    const small = top.smallShare > 0.5;
    return {
      bound: small ? 'latency of small collectives' : bound,
      share,
      // `share` counts all exposed communication; the detail names the largest traffic, with its own share.
      detail: `${trafficName(top)} (${((100 * top.exposedS) / s.stepTimeS).toFixed(1)}% of the step${small ? ', mostly collectives under 1 MiB' : ''}${exposure.length > 1 ? `; all exposed communication ${(100 * share).toFixed(1)}%` : ''})`,
      exposure,
    };
  }
  const why =
    bound === 'pipeline bubble' ? 'stages wait for each other while the pipeline fills and drains'
    : bound === 'optimizer on the host' ? 'the GPUs wait for the CPU-Adam update of the offloaded optimizer state (cluster.node.hostAdamParamsPerS; more nodes share it, or keep the state on the GPUs)'
    : 'ranks wait for slower ranks';
  return { bound, share, detail: `${why}; ${(100 * share).toFixed(1)}% of the step`, exposure };
}
