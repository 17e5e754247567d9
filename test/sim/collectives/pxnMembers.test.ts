import { describe, expect, it } from 'vitest';
import { buildTopology } from '../../../src/sim/network/topology.js';
import { CollectiveService } from '../../../src/sim/collectives/collectiveService.js';
import { resolveClusterSection } from '../../../src/scenario/resolve.js';

/**
 * PXN hands a GPU's node-crossing data over NVLink to the GPU next to the channel's NIC, and that GPU must be a rank of
 * the communicator. A group that holds only some GPUs of a node can use only the NICs of its own GPUs.
 */
const cluster = resolveClusterSection({ preset: 'dgx-a100-80gb', nodes: 2 }, 'test');
const topology = buildTopology(cluster);
const service = new CollectiveService(topology, {});
const options = { algorithm: 'ring' as const, protocol: 'Simple' as const, predictedNs: 0 };
const bytes = 2 ** 30;

/** The NICs (`n<node>.nic<i>`) the node-crossing routes of a ring all-reduce over `group` go through. */
function nicsUsed(group: number[]): Set<string> {
  const [phase] = service.phases('all_reduce', group, bytes, options);
  const names = new Set<string>();
  for (const r of phase.routes) {
    for (const l of r) {
      const link = topology.links[l];
      for (const d of [link.from, link.to]) if (topology.devices[d].kind === 'nic') names.add(topology.devices[d].name);
    }
  }
  return names;
}

const busGBps = (group: number[]) => (bytes * (2 * (group.length - 1))) / group.length / service.simulateIdleNs('all_reduce', group, bytes, options);

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
});
