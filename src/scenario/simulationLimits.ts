import type { Problem } from './errors.js';

/**
 * The largest inputs the simulator takes. It runs every micro-batch of a step and simulates the GPUs' traffic,
 * so time and memory grow with both: 10,000 micro-batches per replica of a Llama-2-7B DDP step take about 9 s and
 * 1.2 GiB on the development machine (`reports/bench/`), and ten times that exhausts the heap. Clusters past
 * 262,144 GPUs (2^18, above the largest built today) would take minutes per step.
 */
export const MAX_MICRO_BATCHES_PER_STEP = 10_000;
export const MAX_GPUS = 262_144;

/** Problems for a step too large to simulate: too many micro-batches per replica, or GPUs. */
export function simulationLimitProblems(gpus: number, microBatches: number): Problem[] {
  const problems: Problem[] = [];
  if (gpus > MAX_GPUS) {
    problems.push({ path: 'cluster.nodes', message: `${gpus.toLocaleString('en-US')} GPUs is more than the ${MAX_GPUS.toLocaleString('en-US')} the simulator takes (time grows with the cluster); simulate a smaller cluster` });
  }
  if (Number.isFinite(microBatches) && microBatches > MAX_MICRO_BATCHES_PER_STEP) {
    problems.push({
      path: 'training.globalBatch',
      message:
        `makes ${Math.round(microBatches).toLocaleString('en-US')} micro-batches per step on each replica (globalBatch / (microBatch × dp)); the simulator runs each one, ` +
        `and more than ${MAX_MICRO_BATCHES_PER_STEP.toLocaleString('en-US')} exhausts its time and memory. Raise training.microBatch, or simulate a smaller ` +
        'globalBatch: past a few micro-batches the step time grows linearly with their number',
    });
  }
  return problems;
}
