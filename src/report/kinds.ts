import type { TaskKind } from '../sim/program/types.js';

/** How a task kind looks in the charts: its colour and its legend text. */
export interface KindStyle {
  color: string;
  label: string;
}

/**
 * Colours per task kind (Tableau 10, which stays distinguishable for most colour-vision deficiencies):
 * compute in blues/oranges/greens, data-parallel communication in reds and purples, model-parallel
 * communication in teal and brown, copies in light greens.
 */
export const KIND_STYLES: Record<TaskKind, KindStyle> = {
  forward: { color: '#4e79a7', label: 'forward' },
  backward: { color: '#f28e2b', label: 'backward' },
  recompute: { color: '#edc948', label: 'recompute' },
  optimizer: { color: '#59a14f', label: 'optimizer' },
  'dp-allreduce': { color: '#e15759', label: 'DP gradient all-reduce' },
  'dp-reducescatter': { color: '#ff9da7', label: 'DP gradient reduce-scatter' },
  'dp-allgather': { color: '#b07aa1', label: 'DP all-gather' },
  'tp-collective': { color: '#76b7b2', label: 'TP collective' },
  'cp-exchange': { color: '#1f3b73', label: 'CP exchange' },
  'ep-alltoall': { color: '#b6992d', label: 'EP all-to-all' },
  'pp-send': { color: '#9c755f', label: 'PP send/receive' },
  'zero-gather': { color: '#d4a6c8', label: 'ZeRO parameter gather' },
  h2d: { color: '#8cd17d', label: 'host→device copy' },
  d2h: { color: '#499894', label: 'device→host copy' },
  'host-optimizer': { color: '#bab0ac', label: 'optimizer on the host (CPU offload)' },
  other: { color: '#79706e', label: 'other' },
};

/** Legend order: the order of `KIND_STYLES`. */
export const KIND_ORDER = Object.keys(KIND_STYLES) as TaskKind[];

/** Style of a kind; unknown kinds (added to the simulator later) fall back to `other`'s colour. */
export function kindStyle(kind: string): KindStyle {
  return (KIND_STYLES as Record<string, KindStyle>)[kind] ?? { color: KIND_STYLES.other.color, label: kind };
}

/** A CSS class name for a kind (`k-dp-allreduce`). */
export function kindClass(kind: string): string {
  return `k-${kind.replace(/[^a-zA-Z0-9-]/g, '_')}`;
}
