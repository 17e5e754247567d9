import type { NodeSpec } from './types.js';

/** The GPU pairs joined directly on an NVLink or Infinity Fabric mesh node, and how many links each pair has. */
export type MeshPairs = NonNullable<NodeSpec['nvlinkMesh']>;

/** NVLink pairs of the DGX-1 (V100) hybrid cube-mesh: two fully connected quads (0-3, 4-7) plus i↔i+4. */
export const DGX1_MESH: MeshPairs = [
  { a: 0, b: 1, links: 1 },
  { a: 0, b: 2, links: 1 },
  { a: 0, b: 3, links: 2 },
  { a: 0, b: 4, links: 2 },
  { a: 1, b: 2, links: 2 },
  { a: 1, b: 3, links: 1 },
  { a: 1, b: 5, links: 2 },
  { a: 2, b: 3, links: 2 },
  { a: 2, b: 6, links: 1 },
  { a: 3, b: 7, links: 1 },
  { a: 4, b: 5, links: 1 },
  { a: 4, b: 6, links: 1 },
  { a: 4, b: 7, links: 2 },
  { a: 5, b: 6, links: 2 },
  { a: 5, b: 7, links: 1 },
  { a: 6, b: 7, links: 2 },
];

/** A fully connected mesh of `gpus` GPUs, `links` links between every pair (AMD's 8-GPU Infinity Fabric platforms). */
export function fullMesh(gpus: number, links = 1): MeshPairs {
  const pairs: MeshPairs = [];
  for (let a = 0; a < gpus; a++) for (let b = a + 1; b < gpus; b++) pairs.push({ a, b, links });
  return pairs;
}
