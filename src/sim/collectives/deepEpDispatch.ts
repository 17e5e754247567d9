import type { Topology } from '../network/types.js';
import { reachProbability, type ExpertRouting } from '../workload/routeSpread.js';
import { groupLayout } from './groupLayout.js';
import { latencyOf, PhaseBuilder, type PlanShape } from './phaseShape.js';

/**
 * An expert dispatch (or combine) as DeepEP's normal kernels run it (deepseek-ai/DeepEP, "normal kernels with NVLink
 * and RDMA forwarding"; DeepSeek-V3 report §3.2.2): a token goes over the network once to each other node its experts
 * are on, to the GPU of the sender's rail there, which forwards it over NVLink once to each GPU of that node holding
 * one of its experts; inside the sender's node it goes over NVLink once to each such GPU. The k copies a token's
 * experts need are made where they arrive, so a token crosses each link at most once however many of its experts lie
 * beyond. The network sends and the NVLink forwards are chunked and pipelined, so all of them run as one phase that
 * ends when the most loaded link has drained: each transfer runs as the load it puts on each link of its route, one
 * flow a link (as the all-to-all's, allToAll.ts). The combine runs the same links the other way with the same loads.
 *
 * The collective's size is the sender's routed copies, k × tokens × hidden × bytes (as for the all-to-all), so each
 * transfer carries reach / k of it, reach being the chance that a token reaches the receiving node or GPU
 * (routeSpread.ts). EP rank j of the group holds experts [j·E/n, (j+1)·E/n), as Megatron-Core places them.
 */
export function deepEpDispatchShape(topology: Topology, group: ArrayLike<number>, routing: ExpertRouting): PlanShape {
  const gpn = topology.cluster.node.gpusPerNode;
  const layout = groupLayout(group, gpn);
  const reachOf = reachOfRanks(group, routing);
  const gpuShare = new Map<number, number>();
  for (let i = 0; i < group.length; i++) gpuShare.set(group[i], reachOf([group[i]]) / routing.topK);
  const nodeShare = layout.members.map((m) => reachOf(m) / routing.topK);
  const b = new PhaseBuilder(topology);
  layout.members.forEach((from, a) => {
    from.forEach((src, slot) => {
      layout.members.forEach((to, d) => {
        const forwarder = d === a ? src : to[slot % to.length];
        if (d !== a) addNetworkSend(topology, b, src, forwarder, nodeShare[d]);
        for (const dst of to)
          if (dst !== forwarder) b.addLinkLoads(topology.route(forwarder, dst, 0), gpuShare.get(dst)!);
      });
    });
  });
  return { phases: [b.build(1, latencyOf(topology, 'ring', 'all_to_all', layout))], channels: 1 };
}

/**
 * The chance that a token reaches some of a set of the group's ranks, for any set: EP rank j of the group holds experts
 * [j·E/n, (j+1)·E/n).
 */
export function reachOfRanks(group: ArrayLike<number>, routing: ExpertRouting): (ranks: readonly number[]) => number {
  const position = new Map<number, number>();
  for (let i = 0; i < group.length; i++) position.set(group[i], i);
  const perRank = routing.experts / group.length;
  return (ranks) =>
    reachProbability(
      routing,
      ranks.map((g) => [position.get(g)! * perRank, perRank] as const),
    );
}

/** The network send from `src` to the GPU of its rail in another node, through the NIC of the sender's rail. */
function addNetworkSend(topology: Topology, b: PhaseBuilder, src: number, dst: number, share: number): void {
  const node = topology.cluster.node;
  const nic = Math.floor(((src % node.gpusPerNode) * Math.max(1, node.nicsPerNode)) / node.gpusPerNode);
  b.addLinkLoads(topology.route(src, dst, nic), share);
}
