import { ScenarioError } from '../errors.js';
import type { ClusterSpec } from '../hardware/types.js';

/** The most GPUs a mesh node may have (see `checkClusterSpec`). */
export const MAX_MESH_GPUS = 8;

/**
 * What a cluster must satisfy before its topology can be built: whole, positive counts of nodes, GPUs, PCIe switches,
 * NICs and nodes per leaf, an oversubscription of at least 1, and an NVLink mesh of distinct GPUs of the node.
 * @throws ScenarioError naming the field
 */
export function checkClusterSpec(c: ClusterSpec): void {
  const n = c.node;
  const posInt = (v: number, path: string) => {
    if (!Number.isInteger(v) || v < 1) throw new ScenarioError(path, `expected a positive integer, got ${v}`);
  };
  posInt(c.nodes, 'cluster.nodes');
  posInt(n.gpusPerNode, 'cluster.node.gpusPerNode');
  posInt(n.gpusPerPcieSwitch, 'cluster.node.gpusPerPcieSwitch');
  posInt(n.nicsPerNode, 'cluster.node.nicsPerNode');
  posInt(c.network.nodesPerLeaf, 'cluster.network.nodesPerLeaf');
  if (!(c.network.oversubscription >= 1))
    throw new ScenarioError(
      'cluster.network.oversubscription',
      `expected a number >= 1, got ${c.network.oversubscription}`,
    );
  if (n.intra === 'nvlink-mesh') {
    // The rings over a mesh are found by searching its Hamiltonian cycles (meshRing.ts): exhaustive up to 8 GPUs, as
    // every mesh node built (DGX-1, AMD's 8-GPU platforms) has; beyond that the search neither ends soon nor loads
    // the links alike.
    if (n.gpusPerNode > MAX_MESH_GPUS)
      throw new ScenarioError(
        'cluster.node.gpusPerNode',
        `is ${n.gpusPerNode}, but NVLink or Infinity Fabric meshes of at most ${MAX_MESH_GPUS} GPUs are modelled; ` +
          `use nodes of ${MAX_MESH_GPUS} or fewer, or intra: nvswitch`,
      );
    if (!n.nvlinkMesh || n.nvlinkMesh.length === 0)
      throw new ScenarioError('cluster.node.nvlinkMesh', 'an nvlink-mesh node needs its NVLink pairs');
    n.nvlinkMesh.forEach((p, k) => {
      const ok =
        [p.a, p.b].every((g) => Number.isInteger(g) && g >= 0 && g < n.gpusPerNode) && p.a !== p.b && p.links > 0;
      if (!ok)
        throw new ScenarioError(
          `cluster.node.nvlinkMesh[${k}]`,
          `expected two distinct GPUs in 0..${n.gpusPerNode - 1} and links > 0`,
        );
    });
  }
}
