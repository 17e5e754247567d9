import { UnknownPresetError } from '../errors.js';
import { GPU_PRESETS } from './gpus.js';
import { NETWORK_PRESETS } from './networks.js';
import { NODE_PRESETS } from './nodes.js';
import type { GpuSpec, NetworkSpec, NodeSpec } from './types.js';

export { UnknownPresetError } from '../errors.js';

/** The kinds of hardware preset. */
export type PresetKind = 'gpu' | 'node' | 'network';

function lookup<T>(kind: PresetKind, table: Readonly<Record<string, T>>, name: string, path?: string): T {
  if (Object.prototype.hasOwnProperty.call(table, name)) return table[name];
  throw new UnknownPresetError(kind, name, Object.keys(table), path ?? kind);
}

/** Names of the GPU presets, in declaration order. */
export function gpuPresetNames(): string[] {
  return Object.keys(GPU_PRESETS);
}

/** Names of the node (server) presets. */
export function nodePresetNames(): string[] {
  return Object.keys(NODE_PRESETS);
}

/** Names of the scale-out network presets. */
export function networkPresetNames(): string[] {
  return Object.keys(NETWORK_PRESETS);
}

/**
 * GPU preset by name. Throws `UnknownPresetError` (a `ScenarioError` at `path`, default `gpu`) listing the
 * allowed names.
 */
export function gpuPreset(name: string, path?: string): GpuSpec {
  return lookup('gpu', GPU_PRESETS, name, path);
}

/** Node preset by name; throws `UnknownPresetError` for an unknown one. */
export function nodePreset(name: string, path?: string): NodeSpec {
  return lookup('node', NODE_PRESETS, name, path);
}

/** Network preset by name; throws `UnknownPresetError` for an unknown one. */
export function networkPreset(name: string, path?: string): NetworkSpec {
  return lookup('network', NETWORK_PRESETS, name, path);
}

/** Names of every preset of one kind. */
export function presetNames(kind: PresetKind): string[] {
  if (kind === 'gpu') return gpuPresetNames();
  if (kind === 'node') return nodePresetNames();
  return networkPresetNames();
}
