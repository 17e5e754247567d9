import { describe, expect, it } from 'vitest';
import { buildTopology } from '../../../src/sim/network/topology.js';
import { CollectiveService } from '../../../src/sim/collectives/collectiveService.js';
import { collectiveSweep, sweepSizes } from '../../../src/sim/collectives/sweep.js';
import { busBandwidthFactor } from '../../../src/sim/collectives/busBandwidth.js';
import {
  collectiveLatencyUs,
  treeCorrectionFactor,
  treeModelBytesPerNs,
} from '../../../src/sim/collectives/ncclTuning.js';
import type { Algorithm, CollectiveOp } from '../../../src/sim/collectives/types.js';
import { presetCluster } from '../../helpers/clusters.js';

const GiB = 2 ** 30;
const MiB = 2 ** 20;
const range = (n: number) => [...Array(n).keys()];

function service(
  node: string,
  nodes: number,
  algorithm: Algorithm | 'auto' = 'auto',
  mode: 'aggregated' | 'step' = 'aggregated',
  protocol: 'auto' | 'Simple' = 'auto',
) {
  const topology = buildTopology(presetCluster(node, nodes));
  return { topology, svc: new CollectiveService(topology, { mode, allReduceAlgorithm: algorithm, protocol }) };
}

describe('ring all-reduce on an idle ring', () => {
  it("takes base + 2(N−1)·α + 2(N−1)/N·S/B, with NCCL's Simple-protocol α over NVLink", () => {
    // NCCL tuning.cc (v2.23): ring Simple baseLat 8.4 µs, NVLink hwLat 3.4 µs per step.
    const B = 230; // dgx-a100-80gb nvlinkBandwidthGBps, bytes/ns
    for (const N of [2, 4, 8]) {
      const { svc } = service('dgx-a100-80gb', 1, 'ring', 'aggregated', 'Simple');
      const group = range(N);
      for (const S of [1 * MiB, 256 * MiB, 1 * GiB]) {
        const expectedNs = (8.4 + 2 * (N - 1) * 3.4) * 1e3 + ((2 * (N - 1)) / N) * (S / B);
        const ns = svc.simulateIdleNs('all_reduce', group, S, {
          algorithm: 'ring',
          protocol: 'Simple',
          predictedNs: 0,
        });
        expect(Math.abs(ns - expectedNs)).toBeLessThanOrEqual(2 + expectedNs * 1e-9);
      }
    }
  });

  it('is predicted by the selection model exactly as the flows then run it', () => {
    const { svc } = service('dgx-a100-80gb', 2);
    const group = range(16);
    for (const S of [64 * MiB, 512 * MiB]) {
      const choice = svc.choose('all_reduce', group, S);
      expect(choice.algorithm).toBe('ring');
      expect(svc.simulateIdleNs('all_reduce', group, S, choice)).toBeCloseTo(choice.predictedNs, -1);
    }
  });
});

describe("latency terms, as NCCL's tuning.cc (v2.23.4) composes them", () => {
  it("charges a ring with one rank per node the tree's network hop latency", () => {
    // tuning.cc: interLat = ppn == 1 ? hwLat[NET][TREE][p] : hwLat[NET][a][p]; NET Tree {5.0, 8.5, 14},
    // Ring {2.7, 4.0, 14}. Ring all-reduce over 4 nodes: 2(n−1) = 6 steps, all of them inter-node at ppn 1.
    const ppn1 = (protocol: 'LL' | 'LL128' | 'Simple') =>
      collectiveLatencyUs('ring', protocol, { op: 'all_reduce', ranks: 4, nodes: 4, intraHop: 'nvlink' });
    expect(ppn1('LL')).toBeCloseTo(6.6 + 6 * 5.0, 9);
    expect(ppn1('LL128')).toBeCloseTo(14 + 6 * 8.5, 9);
    expect(ppn1('Simple')).toBeCloseTo(8.4 + 6 * 14, 9);
    // Two ranks per node keep the ring's own figures: 14 steps, 6 of them inter-node.
    expect(collectiveLatencyUs('ring', 'LL', { op: 'all_reduce', ranks: 8, nodes: 4, intraHop: 'nvlink' })).toBeCloseTo(
      6.6 + 8 * 0.6 + 6 * 2.7,
      9,
    );
  });

  it(
    "counts the tree's network depth as the integer log2 of " + 'the node count (log2i) and ranks per node in integers',
    () => {
      // tuning.cc: 2·((nRanks/nNodes − 1)·intraLat + log2i(nNodes)·interLat); Tree LL: base 6.8, NVLink 0.6, NET 5.0.
      for (const [nodes, depth] of [
        [2, 1],
        [3, 1],
        [5, 2],
        [6, 2],
        [7, 2],
        [8, 3],
        [12, 3],
      ]) {
        const us = collectiveLatencyUs('tree', 'LL', { op: 'all_reduce', ranks: 8 * nodes, nodes, intraHop: 'nvlink' });
        expect(us).toBeCloseTo(6.8 + 2 * (7 * 0.6 + depth * 5.0), 9);
      }
      // 13 ranks on 2 nodes: nRanks/nNodes = 6 in integers.
      expect(
        collectiveLatencyUs('tree', 'LL', { op: 'all_reduce', ranks: 13, nodes: 2, intraHop: 'nvlink' }),
      ).toBeCloseTo(6.8 + 2 * (5 * 0.6 + 5.0), 9);
    },
  );
});

describe("algorithm choice across nodes, as NCCL's tuner makes it", () => {
  it(
    "rates the tree from the ring's bus bandwidth: ×0.92, " +
      '×0.5 bus→algorithm, LL ×1/3.8 (capped), medium-size correction',
    () => {
      // tuning.cc: tree busBw = 0.92 × nChannels·bw, algBw = busBw × 0.5; LL: busBw/3.8 capped at llMaxBw.
      expect(treeModelBytesPerNs('Simple', 100, 2, 'ampere', GiB)).toBeCloseTo(46, 9);
      expect(treeModelBytesPerNs('LL128', 100, 4, 'ampere', GiB)).toBeCloseTo((92 * 120) / 128 / 2, 9);
      expect(treeModelBytesPerNs('LL', 100, 4, 'ampere', GiB)).toBeCloseTo(19.0 / 2, 9); // 92/3.8 > llMaxBw 19
      // Index log2(bytes >> 6), as tuning.cc's log2i: 1 MiB = 64 B · 2^14 → Simple row index 14 = 0.5.
      expect(treeCorrectionFactor('Simple', MiB)).toBe(0.5);
      // Boundaries where the rows change (off-by-one or swapped rows would fail here).
      expect(treeCorrectionFactor('LL128', 4095)).toBe(0.9); // index 5
      expect(treeCorrectionFactor('LL128', 4096)).toBe(0.8); // index 6
      expect(treeCorrectionFactor('LL', 63)).toBe(1);
      expect(treeCorrectionFactor('LL', 64 * 16)).toBe(0.9); // index 4
      expect(treeCorrectionFactor('Simple', 2 ** 28)).toBe(0.9); // index 22, the last corrected
      expect(treeCorrectionFactor('Simple', 2 ** 29)).toBe(1);
      expect(treeCorrectionFactor('Simple', GiB)).toBe(1);
    },
  );

  it('runs a large all-reduce over two nodes as a ring although a tree would move it faster there', () => {
    // Two DGX A100 nodes: the double binary tree sends each byte across the NICs once per direction,
    // the ring twice, so forced trees are faster on the links; NCCL's model still rates the tree at
    // 0.92·(n−1)/n of the ring and picks the ring (published 2-node busbw stays below the NICs' line rate).
    const auto = service('dgx-a100-80gb', 2).svc;
    const tree = service('dgx-a100-80gb', 2, 'tree').svc;
    const group = range(16);
    const S = 512 * MiB;
    const choice = auto.choose('all_reduce', group, S);
    expect(choice.algorithm).toBe('ring');
    expect(tree.simulateIdleNs('all_reduce', group, S)).toBeLessThan(
      auto.simulateIdleNs('all_reduce', group, S, choice),
    );
    // Small messages are latency-bound and still go to the tree (log-depth latency across nodes).
    const bigCluster = service('dgx-a100-80gb', 16).svc;
    expect(bigCluster.choose('all_reduce', range(128), 64 * 1024).algorithm).toBe('tree');
  });
});

describe('step-by-step and aggregated collectives', () => {
  const cases: [string, number, CollectiveOp, Algorithm][] = [
    ['dgx-a100-80gb', 1, 'all_reduce', 'ring'],
    ['dgx-a100-80gb', 4, 'all_reduce', 'ring'],
    ['dgx-a100-80gb', 4, 'all_reduce', 'hierarchical'],
    ['dgx-a100-80gb', 2, 'all_gather', 'ring'],
    ['dgx-a100-80gb', 2, 'reduce_scatter', 'ring'],
    ['pcie-8gpu', 2, 'all_reduce', 'ring'],
    ['dgx-1-v100', 1, 'all_reduce', 'ring'],
  ];
  for (const [node, nodes, op, algorithm] of cases) {
    it(`agree within 1% on an idle network: ${op}/${algorithm} on ${nodes}× ${node}`, () => {
      const group = range(nodes * 8);
      for (const S of [64 * 1024, 64 * MiB]) {
        const agg = service(node, nodes, algorithm, 'aggregated').svc;
        const step = service(node, nodes, algorithm, 'step').svc;
        const choice = agg.choose(op, group, S);
        const a = agg.simulateIdleNs(op, group, S, choice);
        const s = step.simulateIdleNs(op, group, S, choice);
        expect(Math.abs(s - a) / a).toBeLessThan(0.01);
      }
    });
  }
});

describe('bus bandwidth of the presets against published nccl-tests results', () => {
  const busbwAt = (node: string, nodes: number, S: number, algorithm: Algorithm | 'auto' = 'auto', overrides = {}) => {
    const topology = buildTopology(presetCluster(node, nodes, overrides));
    const [row] = collectiveSweep(topology, 'all_reduce', range(nodes * topology.cluster.node.gpusPerNode), [S], {
      mode: 'aggregated',
      allReduceAlgorithm: algorithm,
      protocol: 'auto',
    });
    return row.busbwGBps;
  };

  it(
    'the double binary tree across nodes carries both trees on every channel: ' +
      'near the ring, as NCCL rates it (×0.92), not ⅔ of it',
    () => {
      // One tree per channel leaves the NICs of a node interior to it with three flows of the channel's whole share.
      for (const nodes of [8, 16]) {
        const tree = busbwAt('dgx-a100-80gb', nodes, GiB, 'tree');
        const ring = busbwAt('dgx-a100-80gb', nodes, GiB, 'ring');
        expect(tree / ring, `${nodes} nodes`).toBeGreaterThan(0.85);
        expect(tree / ring, `${nodes} nodes`).toBeLessThan(1.1);
      }
    },
  );

  it('8× A100 NVSwitch: 231.6 GB/s at 8 GB (Azure ND A100 v4, NCCL 2.18.5), within 5%', () => {
    expect(busbwAt('dgx-a100-80gb', 1, 8 * GiB)).toBeGreaterThan(231.6 * 0.95);
    expect(busbwAt('dgx-a100-80gb', 1, 8 * GiB)).toBeLessThan(231.6 * 1.05);
  });

  it('8× H100 with NVLS: ≈480 GB/s; ring only: ≈370 GB/s (NVIDIA/nccl#1455, nccl-tests#212), within 5%', () => {
    const nvls = busbwAt('dgx-h100', 1, 8 * GiB);
    expect(nvls).toBeGreaterThan(480 * 0.95);
    expect(nvls).toBeLessThan(480 * 1.05);
    const ring = busbwAt('dgx-h100', 1, 8 * GiB, 'ring');
    expect(ring).toBeGreaterThan(370 * 0.95);
    expect(ring).toBeLessThan(370 * 1.05);
  });

  it(
    'one A100 NVSwitch node, 1 GiB: 229.4 GB/s on 8 GPUs, ' +
      "221.9 on 4 (vTrain's published nccl-tests tables), within 5%",
    () => {
      // test/validation/vtrain-a100-allreduce/AR_GPU{8,4}_1M_1024M_LUT.csv, last row (out-of-place busbw).
      // Their 2-GPU table reads 197.3 GB/s, 14% below the model: NCCL's 2-rank case is not modelled apart.
      const at = (n: number) => {
        const topology = buildTopology(presetCluster('dgx-a100-80gb', 1));
        return collectiveSweep(topology, 'all_reduce', range(n), [GiB], {
          mode: 'aggregated',
          allReduceAlgorithm: 'auto',
          protocol: 'auto',
        })[0].busbwGBps;
      };
      for (const [n, published] of [
        [8, 229.35],
        [4, 221.86],
      ]) {
        expect(at(n)).toBeGreaterThan(published * 0.95);
        expect(at(n)).toBeLessThan(published * 1.05);
      }
    },
  );

  it('DGX A100 nodes with 8× HDR: ≈192 GB/s across nodes (NVIDIA, quoted in nccl#1576), within 7%', () => {
    // With NCCL's own choice (auto), as the published runs were made: the tuner picks the ring here.
    const bw = busbwAt('dgx-a100-80gb', 4, 4 * GiB);
    expect(bw).toBeGreaterThan(192 * 0.93);
    expect(bw).toBeLessThan(192 * 1.07);
  });

  it('2 HGX A100 nodes with 4× HDR: 86–91 GB/s (nccl-tests#100, #175), within 10%', () => {
    const bw = busbwAt('dgx-a100-80gb', 2, 4 * GiB, 'auto', { nicsPerNode: 4 });
    expect(bw).toBeGreaterThan(86 * 0.9);
    expect(bw).toBeLessThan(91 * 1.1);
  });
});

describe('small messages', () => {
  it('fall off to a latency floor instead of a flat bandwidth line', () => {
    const { topology } = service('dgx-a100-80gb', 1);
    const rows = collectiveSweep(topology, 'all_reduce', range(8), sweepSizes(8, 8 * GiB), {
      mode: 'aggregated',
      allReduceAlgorithm: 'auto',
      protocol: 'auto',
    });
    const small = rows[0];
    const large = rows[rows.length - 1];
    expect(small.busbwGBps).toBeLessThan(0.001 * large.busbwGBps);
    // Published 8-GPU small all-reduce times are 10–45 µs (nccl-tests#123, Azure ND A100 v4).
    expect(small.timeUs).toBeGreaterThan(5);
    expect(small.timeUs).toBeLessThan(60);
    for (let i = 1; i < rows.length; i++) expect(rows[i].timeUs).toBeGreaterThanOrEqual(rows[i - 1].timeUs);
    for (let i = 1; i < rows.length; i++)
      expect(rows[i].busbwGBps).toBeGreaterThanOrEqual(rows[i - 1].busbwGBps * 0.999);
  });

  it('switch from LL to LL128 to Simple as size grows, as NCCL does', () => {
    const { svc } = service('dgx-a100-80gb', 1);
    expect(svc.choose('all_reduce', range(8), 8).protocol).toBe('LL');
    expect(svc.choose('all_reduce', range(8), 4 * GiB).protocol).toBe('Simple');
  });

  it('never picks LL128 on a PCIe-only node unless forced, as NCCL enables it by default only over NVLink', () => {
    // tuning.cc v2.19–v2.23: LL128's default enable requires graphs[a]->typeIntra <= PATH_NVB.
    for (const nodes of [1, 2]) {
      const { svc } = service('pcie-8gpu', nodes);
      const group = range(8 * nodes);
      for (let bytes = 8; bytes <= 4 * GiB; bytes *= 4) {
        for (const op of ['all_reduce', 'all_gather', 'broadcast'] as CollectiveOp[])
          expect(svc.choose(op, group, bytes).protocol).not.toBe('LL128');
      }
    }
    // NCCL_PROTO=LL128 still runs it.
    const forced = new CollectiveService(buildTopology(presetCluster('pcie-8gpu', 1)), {
      mode: 'aggregated',
      allReduceAlgorithm: 'auto',
      protocol: 'LL128',
    });
    expect(forced.choose('all_reduce', range(8), 2 * MiB).protocol).toBe('LL128');
  });
});

describe('collective properties', () => {
  it('is never slower when every link gets faster', () => {
    for (const scale of [1, 1.5, 3]) {
      const base = presetCluster('dgx-a100-80gb', 2);
      const faster = presetCluster(
        'dgx-a100-80gb',
        2,
        { nvlinkBandwidthGBps: 230 * scale, pcieBandwidthGBps: 24 * scale },
        { linkGbps: 200 * scale },
      );
      for (const op of ['all_reduce', 'all_gather', 'broadcast'] as CollectiveOp[]) {
        const t0 = collectiveSweep(buildTopology(base), op, range(16), [64 * MiB], {
          mode: 'aggregated',
          allReduceAlgorithm: 'auto',
          protocol: 'auto',
        })[0].timeUs;
        const t1 = collectiveSweep(buildTopology(faster), op, range(16), [64 * MiB], {
          mode: 'aggregated',
          allReduceAlgorithm: 'auto',
          protocol: 'auto',
        })[0].timeUs;
        expect(t1).toBeLessThanOrEqual(t0 * (1 + 1e-9));
      }
    }
  });

  it('reports bus bandwidth with the nccl-tests factors', () => {
    expect(busBandwidthFactor('all_reduce', 8)).toBeCloseTo(14 / 8);
    expect(busBandwidthFactor('all_gather', 8)).toBeCloseTo(7 / 8);
    expect(busBandwidthFactor('reduce_scatter', 4)).toBeCloseTo(3 / 4);
    expect(busBandwidthFactor('broadcast', 8)).toBe(1);
  });

  it('moves a bigger all-gather in proportionally more time at large sizes', () => {
    const { topology } = service('dgx-h100', 2);
    const [a, b] = collectiveSweep(topology, 'all_gather', range(16), [1 * GiB, 2 * GiB], {
      mode: 'aggregated',
      allReduceAlgorithm: 'auto',
      protocol: 'auto',
    });
    expect(b.timeUs / a.timeUs).toBeGreaterThan(1.95);
    expect(b.timeUs / a.timeUs).toBeLessThan(2.05);
  });

  it('sends point to point at the bottleneck of the route: NIC line rate × efficiency across nodes', () => {
    const { topology, svc } = service('dgx-a100-80gb', 2);
    const S = 1 * GiB;
    const ns = svc.simulateIdleNs('send_recv', [0, 8], S, { algorithm: 'ring', protocol: 'Simple', predictedNs: 0 });
    const nic = (topology.cluster.network.linkGbps / 8) * topology.cluster.network.linkEfficiency;
    expect(S / ns).toBeGreaterThan(nic * 0.98);
    expect(S / ns).toBeLessThan(nic * 1.0001);
  });
});
