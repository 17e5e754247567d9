import type { ClusterSpec, NetworkSpec, NodeSpec } from '../../src/sim/hardware/types.js';
import { networkPreset, nodePreset } from '../../src/sim/hardware/presets.js';
import { defaultNetworkFor } from '../../src/scenario/defaultNetworks.js';

/** A cluster of `nodes` preset nodes with the preset's usual network, with optional overrides. */
export function presetCluster(
  node: string,
  nodes: number,
  nodeOverrides: Partial<NodeSpec> = {},
  networkOverrides: Partial<NetworkSpec> = {},
): ClusterSpec {
  const n = { ...nodePreset(node), ...nodeOverrides };
  const network = { ...networkPreset(defaultNetworkFor(node)), ...networkOverrides };
  return { name: `${nodes}x ${node}`, node: n, nodes, network };
}
