import type { Topology } from '../network/types.js';
import { groupLayout } from './groupLayout.js';
import { latencyOf, PhaseBuilder, type PlanShape } from './phaseShape.js';

/**
 * All-to-all as NCCL runs it: each rank sends 1/n of its buffer to every other rank at once, as grouped send/receive
 * pairs (nccl-tests `alltoall_perf`: `ncclGroupStart`, a `ncclSend` and `ncclRecv` per peer, `ncclGroupEnd`). Across
 * nodes a transfer leaves through the NIC on the receiver's rail, reached over NVLink (PXN, on by default since NCCL
 * 2.12: "Doubling all2all Performance with NVIDIA Collective Communication Library 2.12", NVIDIA technical blog, 2022),
 * so the inter-node part of the exchange stays on rails. It pays the latency of a ring's n − 1 steps (NCCL schedules
 * the peers in n − 1 rounds of distance, `p2pSchedule` in enqueue.cc). Its flows are the links' loads, uncoupled: an
 * all-to-all ends when its most loaded link has drained (S/n per transfer crossing it, at the link's share), which is
 * what n² coupled flows give when, as here, every transfer is the same size; it keeps a 64-GPU exchange to some
 * hundreds of flows.
 */
export function allToAllShape(topology: Topology, group: ArrayLike<number>): PlanShape {
  const b = new PhaseBuilder(topology);
  const n = group.length;
  const node = topology.cluster.node;
  const gpn = node.gpusPerNode;
  const nics = Math.max(1, node.nicsPerNode);
  // Every transfer is 1/n of a buffer, so each link's load is 1/n times the transfers crossing it: the transfers run as
  // one flow per link (a single-link route of that multiplicity), ~ the links used instead of n² coupled flows.
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      if (i === j) continue;
      const route = topology.route(group[i], group[j], Math.floor(((group[j] % gpn) * nics) / gpn));
      b.addLinkLoads(route, 1 / n);
    }
  }
  const layout = groupLayout(group, gpn);
  return { phases: [b.build(1, latencyOf(topology, 'ring', 'all_to_all', layout))], channels: 1 };
}
