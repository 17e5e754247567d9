import { ParallelLayout } from './parallel/layout.js';
import type { StepSetup } from './setup.js';
import { stepContext } from './parallel/stepContext.js';
import type { ExpertLoad, RoutingSetup } from './workload/routing.js';
import { expertRoutingOf, type MoeSpec } from './workload/moe.js';
import { reachOfRanks } from './collectives/deepEpDispatch.js';
import { groupLayout } from './collectives/groupLayout.js';

/**
 * What a step of a model with experts assumes, in words: balanced, dropless routing and the all-to-alls not overlapped
 * with compute (neither is what every run does), and which links the expert-parallel all-to-alls cross.
 */
export function moeNotes(setup: StepSetup): string[] {
  const moe = setup.model.moe;
  if (!moe) return [];
  const par = setup.parallel;
  const ep = par.ep ?? 1;
  const what = `experts (${moe.experts}, top ${moe.topK}${moe.sharedExpertFfnHidden > 0 ? ', shared experts' : ''})`;
  const routing = setup.training.routing;
  const loads = stepContext(setup).expertLoads?.filter((l) => l !== undefined);
  const overlap = par.moeOverlap
    ? "the all-to-alls of each forward run beside another micro-batch's backward and the other way round " +
      "(combined 1F1B), the all-to-all kernels' SMs not taken from the compute they overlap"
    : undefined;
  const notes = [
    loads && routing
      ? loadNote(what, routing, loads, overlap)
      : `${what}: routing is taken as balanced and dropless (every expert gets its share of the tokens; ` +
        'training.routing.skew or tokensPerExpert models imbalance), ' +
        `${overlap ? `and ${overlap}` : 'and the dispatch and combine all-to-alls are not overlapped with compute'}`,
  ];
  const etp = par.etp ?? par.tp;
  const layout = new ParallelLayout(par.tp, par.dp, par.pp, par.placement, par.cp ?? 1);
  const gpn = setup.cluster.node.gpusPerNode;
  const span = (group: readonly number[]) => new Set(group.map((r) => Math.floor(r / gpn))).size;
  const wire = setup.cluster.node.intra === 'pcie' ? 'PCIe' : 'NVLink';
  const nics = `the NICs (${setup.cluster.network.linkGbps} Gb/s ${setup.cluster.network.fabric})`;
  if (ep > 1) {
    const group = layout.epGroup(0, 0, 0, ep, etp);
    const nodes = span(group);
    notes.push(
      nodes > 1
        ? `expert parallelism ${ep}: each expert-parallel group spans ${nodes} nodes, so its all-to-alls cross ${nics}`
        : `expert parallelism ${ep}: each expert-parallel group lies inside one node, ` +
            `so its all-to-alls stay on ${wire}`,
    );
    if (par.dispatcher === 'deepep') notes.push(deepEpNote(moe, group, gpn));
  }
  if (etp !== par.tp) {
    const nodes = span(layout.etpGroup(0, 0, 0, etp));
    const gathers = nodes > 1 ? `cross ${nics}` : `stay on ${wire}`;
    notes.push(
      `expert tensor parallelism ${etp} of its own (attention's tp ${par.tp}): the experts fold over the stage's ` +
        `ranks apart from attention${etp > 1 ? `, and each expert tensor-parallel group's gathers ${gathers}` : ''}`,
    );
  }
  return notes;
}

/** The note of routing as the scenario gives it: how much more than its share the busiest rank computes, the drops. */
function loadNote(what: string, routing: RoutingSetup, loads: readonly ExpertLoad[], overlap?: string): string {
  const meanExcess = (mean(loads.map((l) => l.busiestFactor)) * 100 - 100).toFixed(1);
  const maxExcess = (Math.max(...loads.map((l) => l.busiestFactor)) * 100 - 100).toFixed(1);
  const drops =
    routing.capacityFactor !== undefined
      ? `; the capacity drops ${(100 * mean(loads.map((l) => l.droppedShare))).toFixed(1)}% of the routed tokens`
      : '';
  return (
    `${what}: ${routingWords(routing)}; the busiest expert-parallel rank computes ${meanExcess}% more than a ` +
    `balanced share on average over the layers (at most ${maxExcess}%), ` +
    `and every rank's all-to-alls wait for it${drops}; ${overlap ?? 'the all-to-alls are not overlapped with compute'}`
  );
}

/**
 * How far DeepEP's dispatch sends a token, against the all-to-all's k copies, and what of DeepEP is left out
 * (collectives/deepEpDispatch.ts).
 */
function deepEpNote(moe: MoeSpec, group: readonly number[], gpusPerNode: number): string {
  const routing = expertRoutingOf(moe);
  const reach = reachOfRanks(group, routing);
  const { members } = groupLayout(group, gpusPerNode);
  const otherNodes = members.slice(1).reduce((sum, m) => sum + reach(m), 0);
  const gpus = group.reduce((sum, g) => sum + reach([g]), 0);
  const limit =
    routing.groups > 1 ? `, group-limited routing: ${routing.groupsPerToken} of ${routing.groups} groups a token` : '';
  const across =
    members.length > 1
      ? 'over the network once to each other node holding one of its experts ' +
        `(${otherNodes.toFixed(2)} of the ${members.length - 1} others on average${limit}), then `
      : '';
  return (
    `DeepEP dispatch: a token goes ${across}over NVLink once to each GPU holding one of its experts ` +
    `(${gpus.toFixed(2)} of ${group.length}), where the all-to-all sends its ${moe.topK} copies; balanced routing is ` +
    "assumed for that spread, and DeepEP's own SMs (taken from compute), its notify step and host wait are not modelled"
  );
}

function mean(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
}

function routingWords(r: RoutingSetup): string {
  const how = r.tokensPerExpert
    ? 'tokens per expert from the measured histogram'
    : r.skew > 0
      ? `expert popularity drawn log-normal with skew ${r.skew} (seeded, per layer)`
      : 'balanced routing';
  const cap =
    r.capacityFactor !== undefined
      ? `, capacity factor ${r.capacityFactor}${r.padToCapacity ? ' (experts padded to capacity)' : ''}`
      : ', dropless';
  return how + cap;
}
