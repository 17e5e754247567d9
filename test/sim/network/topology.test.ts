import { describe, expect, it } from 'vitest';
import { ScenarioError } from '../../../src/sim/errors.js';
import { DGX1_V100, DGX_A100_80GB, DGX_H100, PCIE_8GPU } from '../../../src/sim/hardware/nodes.js';
import { IB_HDR, IB_NDR } from '../../../src/sim/hardware/networks.js';
import type { ClusterSpec, NetworkSpec, NodeSpec } from '../../../src/sim/hardware/types.js';
import { buildTopology, type ClusterTopology } from '../../../src/sim/network/topology.js';

function cluster(node: NodeSpec, nodes: number, net: Partial<NetworkSpec> = {}): ClusterSpec {
  return { name: 'test', node, nodes, network: { ...IB_HDR, ...net } };
}

/** Device names along a route: the source, then the far end of every link. */
function hops(t: ClusterTopology, src: number, dst: number, channel = 0): string[] {
  const r = t.route(src, dst, channel);
  if (r.length === 0) return [];
  return [t.devices[t.links[r[0]].from].name, ...Array.from(r, (l) => t.devices[t.links[l].to].name)];
}

describe('topology', () => {
  it('gives an empty route from a GPU to itself', () => {
    const t = buildTopology(cluster(DGX_A100_80GB, 2));
    expect(t.route(5, 5, 0).length).toBe(0);
    expect(t.routeLatencyNs(5, 5, 0)).toBe(0);
  });

  it('routes GPUs of one NVSwitch node through the switch, at the node NVLink bandwidth and latency', () => {
    const t = buildTopology(cluster(DGX_A100_80GB, 2));
    expect(hops(t, 9, 14)).toEqual(['n1.gpu1', 'n1.nvswitch', 'n1.gpu6']);
    for (const l of t.route(9, 14, 3)) expect(t.links[l].bandwidthGBps).toBe(230);
    expect(t.routeLatencyNs(9, 14, 0)).toBe(DGX_A100_80GB.nvlinkLatencyNs);
  });

  it('crosses one leaf between nodes of the same rail group, on the NIC the channel picks', () => {
    const t = buildTopology(cluster(DGX_A100_80GB, 8, { nodesPerLeaf: 4, railOptimized: true }));
    // Channel 0 → NIC 0, on GPU 0's own PCIe switch: GPU → switch → NIC → leaf 0 → NIC → switch → GPU.
    expect(hops(t, 0, 8, 0)).toEqual(['n0.gpu0', 'n0.pcie0', 'n0.nic0', 'leaf0', 'n1.nic0', 'n1.pcie0', 'n1.gpu0']);
    // 2 × PCIe/2 + 2 × net/2 + 2 × PCIe/2.
    expect(t.routeLatencyNs(0, 8, 0)).toBe(2 * DGX_A100_80GB.pcieLatencyNs + IB_HDR.linkLatencyNs);
  });

  it('goes through the spine only when the two NICs hang off different leaves', () => {
    const t = buildTopology(cluster(DGX_A100_80GB, 8, { nodesPerLeaf: 4, railOptimized: false }));
    // Node 0 is under leaf 0, node 5 under leaf 1.
    expect(hops(t, 0, 5 * 8, 0)).toEqual([
      'n0.gpu0',
      'n0.pcie0',
      'n0.nic0',
      'leaf0',
      'spine',
      'leaf1',
      'n5.nic0',
      'n5.pcie0',
      'n5.gpu0',
    ]);
    expect(t.routeLatencyNs(0, 40, 0)).toBe(2 * DGX_A100_80GB.pcieLatencyNs + 2 * IB_HDR.linkLatencyNs);
    expect(hops(t, 0, 3 * 8, 0)).not.toContain('spine');
  });

  it('spreads channels over NICs and puts NIC r of every node in a group on rail leaf r', () => {
    const t = buildTopology(cluster(DGX_A100_80GB, 8, { nodesPerLeaf: 4, railOptimized: true }));
    expect(t.leafCount).toBe(2 * 8);
    // Channel 11 → NIC 3 (11 mod 8), near GPU 3 on PCIe switch 1; GPU 0 hands its data over NVLink to
    // GPU 3 (PXN), which feeds the NIC.
    expect(hops(t, 0, 8 + 3, 11)).toEqual([
      'n0.gpu0',
      'n0.nvswitch',
      'n0.gpu3',
      'n0.pcie1',
      'n0.nic3',
      'leaf3',
      'n1.nic3',
      'n1.pcie1',
      'n1.gpu3',
    ]);
    // A PCIe-only node has no NVLink to hand over on: the data crosses the CPU.
    const p = buildTopology(cluster(PCIE_8GPU, 2));
    expect(hops(p, 0, 8 + 2, 1)).toContain('n0.cpu0');
    // Nodes 4..7 form group 1: rail 3 there is leaf 8 + 3.
    expect(hops(t, 4 * 8, 5 * 8, 3)).toContain('leaf11');
    expect(hops(t, 0, 5 * 8, 3)).toEqual(expect.arrayContaining(['leaf3', 'spine', 'leaf11']));
  });

  it('cables all NICs of a node to one leaf when the fabric is not rail-optimised', () => {
    const t = buildTopology(cluster(DGX_A100_80GB, 4, { nodesPerLeaf: 2, railOptimized: false }));
    expect(t.leafCount).toBe(2);
    const leaves = new Set(
      t.links
        .filter((l) => t.devices[l.from].name.startsWith('n1.nic') && t.devices[l.to].kind === 'leaf')
        .map((l) => t.devices[l.to].name),
    );
    expect(leaves).toEqual(new Set(['leaf0']));
    expect(hops(t, 8, 16, 5)).toEqual(expect.arrayContaining(['n1.nic5', 'leaf0', 'spine', 'leaf1', 'n2.nic5']));
  });

  it('carries line rate × efficiency on NIC links and sum of downlinks / oversubscription on leaf uplinks', () => {
    const net = { linkGbps: 200, linkEfficiency: 1, nodesPerLeaf: 4, railOptimized: false, oversubscription: 2 };
    const t = buildTopology(cluster(DGX_A100_80GB, 6, net));
    const nicUp = t.links.find((l) => t.devices[l.from].name === 'n0.nic0' && t.devices[l.to].kind === 'leaf');
    expect(nicUp?.bandwidthGBps).toBe(25);
    const up = (leaf: string) =>
      t.links.find((l) => t.devices[l.from].name === leaf && t.devices[l.to].kind === 'spine');
    // leaf0: 4 nodes × 8 NICs × 25 GB/s / 2 = 400; leaf1 holds the last 2 nodes: 200.
    expect(up('leaf0')?.bandwidthGBps).toBe(400);
    expect(up('leaf1')?.bandwidthGBps).toBe(200);
  });

  it('routes a PCIe-only node through the CPUs when GPUs sit on different switches', () => {
    const t = buildTopology(cluster(PCIE_8GPU, 1));
    expect(hops(t, 0, 1)).toEqual(['n0.gpu0', 'n0.pcie0', 'n0.gpu1']);
    expect(hops(t, 0, 2)).toEqual(['n0.gpu0', 'n0.pcie0', 'n0.cpu0', 'n0.pcie1', 'n0.gpu2']);
    expect(hops(t, 0, 7)).toEqual(['n0.gpu0', 'n0.pcie0', 'n0.cpu0', 'n0.cpu1', 'n0.pcie3', 'n0.gpu7']);
    const sock = t.route(0, 7, 0)[2];
    expect(t.links[sock]).toMatchObject({ medium: 'socket', bandwidthGBps: PCIE_8GPU.interSocketBandwidthGBps });
  });

  it('uses direct NVLinks of the DGX-1 mesh, with bandwidth proportional to the link count', () => {
    const t = buildTopology(cluster(DGX1_V100, 1));
    const perLink = DGX1_V100.nvlinkBandwidthGBps / 6;
    expect(hops(t, 0, 3)).toEqual(['n0.gpu0', 'n0.gpu3']);
    expect(t.links[t.route(0, 3, 0)[0]].bandwidthGBps).toBeCloseTo(2 * perLink, 12);
    expect(t.links[t.route(0, 1, 0)[0]].bandwidthGBps).toBeCloseTo(perLink, 12);
  });

  it('routes non-neighbours of the DGX-1 mesh through one common neighbour, chosen by channel', () => {
    const t = buildTopology(cluster(DGX1_V100, 1));
    // GPU 0's neighbours are 1, 2, 3, 4; GPU 5's are 1, 4, 6, 7: common 1 (1 link then 2) and 4 (2 then 1).
    const vias = new Set([0, 1, 2, 3].map((c) => hops(t, 0, 5, c)[1]));
    expect(vias).toEqual(new Set(['n0.gpu1', 'n0.gpu4']));
    for (const c of [0, 1]) expect(t.route(0, 5, c).length).toBe(2);
  });

  it('returns connected paths from the source GPU to the destination GPU', () => {
    for (const node of [DGX_A100_80GB, DGX1_V100, PCIE_8GPU, DGX_H100]) {
      const t = buildTopology(cluster(node, 6, { nodesPerLeaf: 2 }));
      for (let s = 0; s < t.gpuCount; s += 5) {
        for (let d = 0; d < t.gpuCount; d += 3) {
          const r = t.route(s, d, s + d);
          if (s === d) continue;
          expect(t.links[r[0]].from).toBe(t.gpuDevice(s));
          expect(t.links[r[r.length - 1]].to).toBe(t.gpuDevice(d));
          for (let k = 1; k < r.length; k++) expect(t.links[r[k]].from).toBe(t.links[r[k - 1]].to);
        }
      }
    }
  });

  it('answers a repeated route from its cache', () => {
    const t = buildTopology(cluster(DGX_A100_80GB, 4));
    expect(t.route(1, 30, 2)).toBe(t.route(1, 30, 10));
    expect(t.route(1, 30, 2)).not.toBe(t.route(1, 30, 3));
  });

  it('builds a 2,048-node, 16,384-GPU cluster with the closed-form device and link counts', () => {
    const t = buildTopology(cluster(DGX_H100, 2048, { ...IB_NDR }));
    expect(t.gpuCount).toBe(16384);
    // Per node: 8 GPUs + NVSwitch + 4 PCIe switches + 2 CPUs + 8 NICs; 64 groups × 8 rails leaves; 1 spine.
    expect(t.devices.length).toBe(2048 * 23 + 512 + 1);
    // Per node: 16 NVLink + 16 GPU↔switch + 8 switch↔CPU + 2 socket + 16 NIC↔switch + 16 NIC↔leaf; 2 per leaf.
    expect(t.links.length).toBe(2048 * 74 + 2 * 512);
    const far = hops(t, 3, 16383, 3);
    // NIC 3 sits on switch 1 next to GPU 3; GPU 7 of the last node is on switch 3, so the data crosses
    // NVLink through GPU 3 there (PXN) instead of the CPUs.
    expect(far).toEqual([
      'n0.gpu3',
      'n0.pcie1',
      'n0.nic3',
      'leaf3',
      'spine',
      `leaf${63 * 8 + 3}`,
      'n2047.nic3',
      'n2047.pcie1',
      'n2047.gpu3',
      'n2047.nvswitch',
      'n2047.gpu7',
    ]);
    expect(t.gpuDevice(16383)).toBe(2047 * 23 + 7);
  });

  it('rejects a cluster with no nodes, naming the field', () => {
    expect(() => buildTopology(cluster(DGX_A100_80GB, 0))).toThrow(ScenarioError);
    expect(() => buildTopology(cluster(DGX_A100_80GB, 0))).toThrow(expect.objectContaining({ path: 'cluster.nodes' }));
  });
});
