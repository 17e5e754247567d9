import type { NodeSpec } from '../sim/hardware/types.js';
import { traitsOf } from '../sim/hardware/architectures.js';
import type { ModelSpec } from '../sim/workload/model.js';
import { expertRoutingOf } from '../sim/workload/moe.js';
import { routingProblem } from '../sim/workload/routeSpread.js';
import type { Problem } from './errors.js';
import type { ScenarioInput } from './schema.js';

/**
 * What is wrong with a model's group-limited routing, what combined 1F1B needs, and what stops the DeepEP dispatcher:
 * it exchanges tokens between expert-parallel ranks (ep > 1) whose experts are whole (etp 1, as Megatron's flex
 * dispatcher runs DeepEP here), over NVLink inside a node and RDMA across (DeepEP checks full NVLink peer access and
 * runs on NVIDIA GPUs only).
 */
export function dispatcherProblems(model: ModelSpec, par: ScenarioInput['parallel'], node: NodeSpec): Problem[] {
  const problems: Problem[] = [];
  const moe = model.moe;
  const wrongRouting = moe && routingProblem(expertRoutingOf(moe));
  if (wrongRouting) problems.push({ path: 'model.moe.routingGroups', message: wrongRouting });
  problems.push(...moeOverlapProblems(model, par));
  if (par.dispatcher !== 'deepep') return problems;
  const at = (path: string, message: string) => problems.push({ path, message: `${message}; use alltoall` });
  const experts = deepEpExpertsProblem(moe ? (par.ep ?? 1) : 1, par.etp ?? par.tp);
  if (experts) at('parallel.dispatcher', experts);
  const unavailable = deepEpUnavailable(node);
  if (unavailable) at('parallel.dispatcher', unavailable);
  return problems;
}

/** Why DeepEP's dispatch is not modelled for experts split so, or undefined where it is: ep > 1, whole experts. */
function deepEpExpertsProblem(ep: number, etp: number): string | undefined {
  if (ep === 1) return 'deepep dispatches between expert-parallel ranks, and ep is 1';
  if (etp !== 1) return `deepep is modelled with whole experts on each rank (etp 1), not etp ${etp}`;
  return undefined;
}

/** Whether DeepEP's dispatch runs for experts over `ep` ranks, each split over `etp`, on `node`. */
export function deepEpRuns(ep: number, etp: number, node: NodeSpec): boolean {
  return !deepEpExpertsProblem(ep, etp) && !deepEpUnavailable(node);
}

/** Why DeepEP does not run on a node (NVIDIA GPUs with NVLink between them only), or undefined where it does. */
export function deepEpUnavailable(node: NodeSpec): string | undefined {
  const traits = traitsOf(node.gpu);
  if (traits.vendor !== 'nvidia') return `deepep runs on NVIDIA GPUs, not ${node.gpu.name} (${traits.label})`;
  if (node.intra === 'pcie' || !(node.nvlinkBandwidthGBps > 0))
    return `deepep needs NVLink between the GPUs of a node, which ${node.name} lacks`;
  return undefined;
}

/** What combined 1F1B needs: expert all-to-alls to hide (ep > 1), and over a pipeline the interleaved schedule. */
function moeOverlapProblems(model: ModelSpec, par: ScenarioInput['parallel']): Problem[] {
  if (!par.moeOverlap) return [];
  const at = (path: string, message: string): Problem => ({ path, message: `${message}; leave moeOverlap off` });
  if (!model.moe || (par.ep ?? 1) === 1)
    return [at('parallel.moeOverlap', 'overlaps expert-parallel all-to-alls, and there are none (ep 1)')];
  // Megatron runs it over a pipeline with a virtual pipeline only (it asserts one): on plain 1F1B a combined step would
  // send its forward's output only at its end and hold the next stage back.
  if (par.pp > 1 && par.schedule !== 'interleaved')
    return [
      at(
        'parallel.schedule',
        `${par.schedule}: combined 1F1B (parallel.moeOverlap) over a pipeline needs the interleaved schedule, ` +
          'as Megatron asks for a virtual pipeline',
      ),
    ];
  return [];
}
