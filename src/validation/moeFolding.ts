import { fileURLToPath } from 'node:url';
import { applyOverrides, loadScenarioFile } from '../scenario/load.js';
import { resolveScenario } from '../scenario/resolve.js';
import { modelFlopsPerStep } from '../sim/workload/flops.js';
import { csvRecords } from './dataFiles.js';
import type { StepTask } from './stepSets.js';

const CHECKS_DIR = fileURLToPath(new URL('../../scenarios/checks/', import.meta.url));

/** The H100's dense BF16 peak the paper's MFU is against (§4.1). */
const PAPER_PEAK_FLOPS = 989.5e12;

/**
 * The Megatron-Core MoE runs of the MoE Parallel Folding paper (test/validation/moe-parallel-folding.csv): each row's
 * scenario with its configuration's overrides, and its measured step time from the published MFU: the step's model
 * FLOPs as clustersim counts them over MFU × peak × GPUs. The two methods of one model, GPU count and batch are one
 * ranking group.
 */
export function moeFoldingTasks(limit: number): StepTask[] {
  return csvRecords('moe-parallel-folding.csv')
    .slice(0, limit)
    .map((r) => {
      const sets = r.sets === '' ? [] : r.sets.split(';');
      const raw = applyOverrides(loadScenarioFile(`${CHECKS_DIR}${r.scenario}`).raw, [
        `cluster.nodes=${r.nodes}`,
        `training.globalBatch=${r.global_batch}`,
        ...sets,
      ]) as Record<string, unknown>;
      const setup = resolveScenario(raw, r.scenario, CHECKS_DIR);
      const p = setup.parallel;
      const gpus = p.tp * p.pp * p.dp * (p.cp ?? 1);
      const flops = modelFlopsPerStep(setup.model, setup.training.globalBatch, setup.training.seqLen);
      const name = r.scenario.replace(/^folding-/, '').replace(/\.yaml$/, '');
      return {
        set: 'moe-folding-h100' as const,
        label: `${name} ${r.method} on ${gpus} GPUs gb${r.global_batch} (table ${r.table})`,
        rankGroup: `${name} ${gpus} GPUs gb${r.global_batch}`,
        measuredS: flops / ((Number(r.mfu_pct) / 100) * PAPER_PEAK_FLOPS * gpus),
        raw,
        baseDir: CHECKS_DIR,
      };
    });
}
