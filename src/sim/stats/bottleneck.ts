import type { TaskKind } from '../program/types.js';
import type { ExposureRow } from './exposure.js';
import type { HostMemory } from '../memory/hostMemory.js';
import type { StageBalance } from './stageBalance.js';

/** What bounds a step, with its share of the step time. */
export interface Bottleneck {
  bound:
    | 'memory'
    | 'compute'
    | 'exposed communication'
    | 'latency of small collectives'
    | 'pipeline bubble'
    | 'optimizer on the host'
    | 'idle (load imbalance)';
  /** Fraction of the step time (for memory: the shortfall as a fraction of capacity). */
  share: number;
  detail: string;
  /** Compute's share of the step: what bounds it when it is most of the step, even where `bound` names a loss. */
  computeShare: number;
  /** Exposed communication by traffic and wire, largest first. */
  exposure: ExposureRow[];
}

const TRAFFIC: Partial<Record<TaskKind, string>> = {
  'dp-allreduce': 'data-parallel gradient all-reduce',
  'dp-reducescatter': 'gradient reduce-scatter',
  'dp-allgather': 'all-gather of the updated weights',
  'tp-collective': 'tensor-parallel collectives',
  'cp-exchange': 'context-parallel exchanges',
  'ep-alltoall': 'expert all-to-alls',
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
  /** With a pipeline, how evenly its stages share the compute. */
  stages?: StageBalance;
}

/** The least share of the step that stages of unequal compute must idle for the bubble's detail to say so. */
export const IMBALANCE_SHARE_TO_SAY = 0.02;

/**
 * The idle that stages of unequal compute force, in words, when it is at least `IMBALANCE_SHARE_TO_SAY` of the step:
 * `3.1% of the step: stage 7 computes for 95.2% of it with 5 layers, stage 1 for 92.0% with 5;
 * parallel.layersPerStage=[…] evens them`. Undefined otherwise.
 */
export function stageImbalanceText(stages: StageBalance | undefined, stepTimeS: number): string | undefined {
  if (!stages || stages.imbalanceShare < IMBALANCE_SHARE_TO_SAY) return undefined;
  const slow = stages.computeS.indexOf(Math.max(...stages.computeS));
  const fast = stages.computeS.indexOf(Math.min(...stages.computeS));
  const pct = (s: number) => `${((100 * s) / stepTimeS).toFixed(1)}%`;
  const split = stages.suggestedLayersPerStage
    ? `; parallel.layersPerStage=[${stages.suggestedLayersPerStage.join(',')}] evens them`
    : stages.layerS !== undefined
      ? `; no split of whole layers evens them (one layer computes for ${pct(stages.layerS)} of the step)`
      : '';
  return (
    `${pct(stages.imbalanceShare * stepTimeS)} of the step: ` +
    `stage ${slow} computes for ${pct(stages.computeS[slow])} of it with ${stages.layers[slow]} layers, ` +
    `stage ${fast} for ${pct(stages.computeS[fast])} with ${stages.layers[fast]}${split}`
  );
}

/** Unequal stages in words where the bottleneck's detail does not already say it (a bubble-bound step's does). */
export function unequalStagesText(
  b: Bottleneck,
  stages: StageBalance | undefined,
  stepTimeS: number,
): string | undefined {
  return b.bound === 'pipeline bubble' ? undefined : stageImbalanceText(stages, stepTimeS);
}

/** What the bubble is made of: fill and drain, and, where stages compute unequally, the idle that forces. */
function bubbleWhy(stages: StageBalance | undefined, stepTimeS: number): string {
  const fill = 'stages wait for each other while the pipeline fills and drains';
  const unequal = stageImbalanceText(stages, stepTimeS);
  return unequal ? `${fill}; of that, stages of unequal compute take ${unequal}` : fill;
}

/**
 * Names what bounds the step: memory if it does not fit; otherwise the largest of exposed
 * communication (named by traffic and wire; "latency of small collectives" when most of it is
 * collectives under 1 MiB), pipeline bubble and idle time, if it takes at least 10% of the step;
 * otherwise compute.
 */
export function diagnose(s: StepShares, exposure: ExposureRow[]): Bottleneck {
  const computeShare = s.computeS / s.stepTimeS;
  if (!s.fits) {
    return {
      bound: 'memory',
      share: s.shortfallBytes / s.capacityBytes,
      detail: `does not fit: ${(s.shortfallBytes / 2 ** 30).toFixed(1)} GiB short per GPU`,
      computeShare,
      exposure,
    };
  }
  const h = s.host;
  if (h?.fits === false) {
    return {
      bound: 'memory',
      share: h.shortfallBytes / h.capacityBytes!,
      detail:
        'the offloaded optimizer state does not fit in host memory: ' +
        `${(h.shortfallBytes / 2 ** 30).toFixed(1)} GiB short per node`,
      computeShare,
      exposure,
    };
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
  if (share < 0.1)
    return {
      bound: 'compute',
      share: computeShare,
      detail: 'the GPUs compute most of the time; faster kernels or more GPUs are what helps',
      computeShare,
      exposure,
    };
  if (bound === 'exposed communication' && exposure.length > 0)
    return { ...exposedTrafficVerdict(exposure, share, s.stepTimeS), computeShare, exposure };
  const why =
    bound === 'pipeline bubble'
      ? bubbleWhy(s.stages, s.stepTimeS)
      : bound === 'optimizer on the host'
        ? 'the GPUs wait for the CPU-Adam update of the offloaded optimizer state ' +
          '(cluster.node.hostAdamParamsPerS; more nodes share it, or keep the state on the GPUs)'
        : 'ranks wait for slower ranks';
  return { bound, share, detail: `${(100 * share).toFixed(1)}% of the step: ${why}`, computeShare, exposure };
}

/**
 * Exposed communication as the bound, named by its largest traffic with that traffic's own share (`share` counts all
 * exposed communication); "latency of small collectives" when most of that traffic is collectives under 1 MiB.
 */
function exposedTrafficVerdict(
  exposure: ExposureRow[],
  share: number,
  stepTimeS: number,
): Pick<Bottleneck, 'bound' | 'share' | 'detail'> {
  const top = exposure[0];
  const small = top.smallShare > 0.5;
  return {
    bound: small ? 'latency of small collectives' : 'exposed communication',
    share,
    detail:
      `${trafficName(top)} (${((100 * top.exposedS) / stepTimeS).toFixed(1)}% of the step` +
      (small ? ', mostly collectives under 1 MiB' : '') +
      (exposure.length > 1 ? `; all exposed communication ${(100 * share).toFixed(1)}%` : '') +
      ')',
  };
}

/** Compute's share from which it, not the largest loss, is what the bottleneck line names first. */
export const COMPUTE_SHARE_BOUNDS = 0.5;

/**
 * What bounds the step in one word, as a table column shows it: `compute` where compute is over half the step, even
 * where `bound` names a loss of 10% or more (the table's share columns show that loss); else `bound`.
 */
export function boundOf(b: Bottleneck): Bottleneck['bound'] {
  return b.bound !== 'memory' && b.computeShare >= COMPUTE_SHARE_BOUNDS ? 'compute' : b.bound;
}

/**
 * The bottleneck as a line says it: what bounds the step, and, where compute is most of the step but one loss takes
 * 10% or more, that loss named as the largest loss rather than as the bound (`compute (76% of the step); the largest
 * loss is exposed communication — …`).
 */
export function bottleneckText(b: Bottleneck): string {
  if (b.bound === 'compute' || b.bound === 'memory' || b.computeShare < COMPUTE_SHARE_BOUNDS)
    return `${b.bound} — ${b.detail}`;
  return `compute (${(100 * b.computeShare).toFixed(1)}% of the step); the largest loss is ${b.bound} — ${b.detail}`;
}
