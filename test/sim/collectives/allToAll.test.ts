import { describe, expect, it } from 'vitest';
import { buildTopology } from '../../../src/sim/network/topology.js';
import { CollectiveService } from '../../../src/sim/collectives/collectiveService.js';
import { busBandwidthFactor } from '../../../src/sim/collectives/busBandwidth.js';
import { presetCluster } from '../../helpers/clusters.js';

const GiB = 2 ** 30;
const MiB = 2 ** 20;
const range = (n: number) => [...Array(n).keys()];

function service(node: string, nodes: number) {
  const cluster = presetCluster(node, nodes);
  const topology = buildTopology(cluster);
  return { cluster, svc: new CollectiveService(topology) };
}

describe('all-to-all on an idle fabric', () => {
  it("takes base + (n−1)·α + (n−1)/n·S/B inside an NVSwitch node, with NCCL's Simple ring α", () => {
    // NCCL tuning.cc (v2.23): Simple baseLat 8.4 µs, NVLink hwLat 3.4 µs a step; dgx-a100-80gb NVLink 230 GB/s a GPU.
    const B = 230;
    const { svc } = service('dgx-a100-80gb', 1);
    for (const n of [2, 4, 8]) {
      for (const S of [1 * MiB, 256 * MiB, 1 * GiB]) {
        const expectedNs = (8.4 + (n - 1) * 3.4) * 1e3 + (((n - 1) / n) * S) / B;
        const choice = svc.choose('all_to_all', range(n), S);
        expect(choice.protocol).toBe('Simple');
        const ns = svc.simulateIdleNs('all_to_all', range(n), S, choice);
        expect(Math.abs(ns - expectedNs)).toBeLessThanOrEqual(2 + expectedNs * 1e-9);
      }
    }
  });

  it('is bounded across nodes by the NICs, each carrying its rail’s share: (nodes−1)/nodes·S/B_nic', () => {
    // Two and four DGX H100 (8 × 400 Gb/s NICs, one a GPU, at the preset's 0.94 link efficiency). PXN hands each
    // transfer to the GPU on the receiver's rail, so NIC j of a node carries what its 8 GPUs send to GPU j of
    // every other node: 8 · (nodes − 1) · S/n = (nodes−1)/nodes · S.
    for (const nodes of [2, 4]) {
      const { cluster, svc } = service('dgx-h100', nodes);
      const nicGBps = (cluster.network.linkGbps / 8) * (cluster.network.linkEfficiency ?? 1);
      const n = 8 * nodes;
      const S = 1 * GiB;
      const ns = svc.simulateIdleNs('all_to_all', range(n), S);
      const wireNs = (((nodes - 1) / nodes) * S) / nicGBps;
      expect(ns).toBeGreaterThanOrEqual(wireNs);
      expect(ns).toBeLessThan(wireNs * 1.02 + 200e3);
    }
  });

  it('reports bus bandwidth as nccl-tests alltoall_perf does, algbw · (n−1)/n', () => {
    expect(busBandwidthFactor('all_to_all', 8)).toBeCloseTo(7 / 8, 12);
    expect(busBandwidthFactor('all_to_all', 64)).toBeCloseTo(63 / 64, 12);
  });

  it('is predicted by the selection model as the flows then run it', () => {
    const { svc } = service('dgx-h100', 2);
    for (const S of [8 * MiB, 512 * MiB]) {
      const choice = svc.choose('all_to_all', range(16), S);
      expect(svc.simulateIdleNs('all_to_all', range(16), S, choice)).toBeCloseTo(choice.predictedNs, -2);
    }
  });
});
