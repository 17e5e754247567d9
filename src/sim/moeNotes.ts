import { ParallelLayout } from './parallel/layout.js';
import type { StepSetup } from './setup.js';

/**
 * What a step of a model with experts assumes, in words: balanced, dropless routing and the all-to-alls not overlapped
 * with compute (neither is what every run does), and which links the expert-parallel all-to-alls cross.
 */
export function moeNotes(setup: StepSetup): string[] {
  const moe = setup.model.moe;
  if (!moe) return [];
  const par = setup.parallel;
  const ep = par.ep ?? 1;
  const notes = [
    `experts (${moe.experts}, top ${moe.topK}${moe.sharedExpertFfnHidden > 0 ? ', shared experts' : ''}): routing is taken as balanced and dropless (every expert gets its share of the tokens; imbalance, which slows the busiest expert's rank, is not modelled yet), and the dispatch and combine all-to-alls are not overlapped with compute`,
  ];
  if (ep > 1) {
    const layout = new ParallelLayout(par.tp, par.dp, par.pp, par.placement, par.cp ?? 1);
    const gpn = setup.cluster.node.gpusPerNode;
    const nodes = new Set(layout.epGroup(0, 0, 0, ep).map((r) => Math.floor(r / gpn))).size;
    notes.push(
      nodes > 1
        ? `expert parallelism ${ep}: each expert-parallel group spans ${nodes} nodes, so its all-to-alls cross the NICs (${setup.cluster.network.linkGbps} Gb/s ${setup.cluster.network.fabric})`
        : `expert parallelism ${ep}: each expert-parallel group lies inside one node, so its all-to-alls stay on ${setup.cluster.node.intra === 'pcie' ? 'PCIe' : 'NVLink'}`,
    );
  }
  return notes;
}
