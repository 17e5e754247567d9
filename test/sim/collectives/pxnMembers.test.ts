import { describe, expect, it } from 'vitest';
import { buildTopology } from '../../../src/sim/network/topology.js';
import { CollectiveService } from '../../../src/sim/collectives/collectiveService.js';
import { resolveClusterSection } from '../../../src/scenario/resolve.js';
import type { Topology } from '../../../src/sim/network/types.js';

/**
 * PXN hands a GPU's node-crossing data over NVLink to the GPU next to the channel's NIC, and that GPU must be a rank of
 * the communicator. A group that holds only some GPUs of a node can use only the NICs of its own GPUs.
 */
const cluster = resolveClusterSection({ preset: 'dgx-a100-80gb', nodes: 2 }, 'test');
const topology = buildTopology(cluster);
const service = new CollectiveService(topology);
const options = { algorithm: 'ring' as const, protocol: 'Simple' as const, predictedNs: 0 };
const bytes = 2 ** 30;

/** The NICs (`n<node>.nic<i>`) the node-crossing routes of an all-reduce over `group` go through. */
function nicsUsed(
  group: number[],
  algorithm: 'ring' | 'tree' | 'hierarchical' = 'ring',
  s = service,
  t: Topology = topology,
): Set<string> {
  const names = new Set<string>();
  for (const phase of s.phases('all_reduce', group, bytes, { ...options, algorithm })) {
    for (const r of phase.routes) {
      for (const l of r) {
        const link = t.links[l];
        for (const d of [link.from, link.to]) if (t.devices[d].kind === 'nic') names.add(t.devices[d].name);
      }
    }
  }
  return names;
}

const busGBps = (group: number[], s = service) =>
  (bytes * (2 * (group.length - 1))) / group.length / s.simulateIdleNs('all_reduce', group, bytes, options);

describe('node-crossing channels use only NICs next to GPUs of the group (PXN through members)', () => {
  it('a data-parallel group of one GPU per node (tp 8) keeps to its own rail, with no NVLink hop', () => {
    expect([...nicsUsed([3, 11])].sort()).toEqual(['n0.nic3', 'n1.nic3']);
    const [phase] = service.phases('all_reduce', [3, 11], bytes, options);
    for (const r of phase.routes) expect([...r].map((l) => topology.links[l].medium)).not.toContain('nvlink');
  });

  it('a GPU alone on its node sends through its own NIC, so the all-reduce is bound by one NIC', () => {
    const group = [...Array(9).keys()];
    expect([...nicsUsed(group)].filter((n) => n.startsWith('n1.'))).toEqual(['n1.nic0']);
    const nicGBps = cluster.network.linkGbps / 8;
    // The lone GPU sends and receives (n − 1)/n of the buffer twice over its one NIC: the bus bandwidth is that NIC's.
    expect(busGBps(group)).toBeLessThan(1.05 * nicGBps);
    expect(busGBps(group)).toBeGreaterThan(0.75 * nicGBps);
  });

  it('whole nodes keep every NIC', () => {
    expect(nicsUsed([...Array(16).keys()]).size).toBe(16);
  });

  it('runs one channel per NIC used, so that 6 or 7 usable NICs each carry an equal share', () => {
    // 6 and 7 GPUs on each node: as many NICs, each at its own NIC's rate (8 channels
    // over 6 NICs would load two twice).
    const nicGBps = cluster.network.linkGbps / 8;
    for (const perNode of [6, 7]) {
      const group = [...Array(perNode).keys()].flatMap((g) => [g, g + 8]).sort((a, b) => a - b);
      expect(busGBps(group)).toBeGreaterThan(0.9 * perNode * nicGBps);
    }
  });

  it("holds for tree and hierarchical all-reduce too: a tp-2 data-parallel group uses its own GPUs' NICs", () => {
    const evenGpus = [0, 2, 4, 6, 8, 10, 12, 14];
    const own = ['n0.nic0', 'n0.nic2', 'n0.nic4', 'n0.nic6', 'n1.nic0', 'n1.nic2', 'n1.nic4', 'n1.nic6'];
    for (const algorithm of ['ring', 'tree', 'hierarchical'] as const)
      expect([...nicsUsed(evenGpus, algorithm)].sort()).toEqual(own);
  });

  it(
    'with 4 NICs for 8 GPUs, every tp-4 data-parallel group ' + "gets the two NICs of its GPUs' PCIe switches alike",
    () => {
      const four = resolveClusterSection(
        { preset: 'dgx-a100-80gb', nodes: 2, node: { preset: 'dgx-a100-80gb', nicsPerNode: 4 } },
        'test',
      );
      const t = buildTopology(four);
      const s = new CollectiveService(t);
      const groups = [0, 1, 2, 3].map((g) => [g, g + 4, g + 8, g + 12]);
      // Groups 0 and 3 hold the NICs' own GPUs; groups 1 and 2 sit beside them under the same switches.
      for (const g of groups) expect([...nicsUsed(g, 'ring', s, t)].filter((n) => n.startsWith('n0.'))).toHaveLength(2);
      const rates = groups.map((g) => busGBps(g, s));
      for (const r of rates) expect(r).toBeCloseTo(rates[0], 6);
      expect(rates[0]).toBeLessThan(2 * (four.network.linkGbps / 8));
    },
  );
});
