import type { Problem } from './errors.js';

/**
 * The largest inputs the simulator takes. It runs every micro-batch of a step and simulates the GPUs' traffic,
 * so time and memory grow with both: 10,000 micro-batches per replica of a Llama-2-7B DDP step take about 9 s and
 * 1.2 GiB on the development machine (`reports/bench/`), and ten times that exhausts the heap. Clusters past
 * 262,144 GPUs (2^18, above the largest built today) would take minutes per step.
 */
export const MAX_MICRO_BATCHES_PER_STEP = 10_000;
export const MAX_GPUS = 262_144;
/**
 * The most layer passes (layers × micro-batches per replica) a step may ask for. The work grows linearly with them
 * (measured here with `/usr/bin/time clustersim simulate deep.yaml --alternatives 0 --set training.globalBatch=64`,
 * deep.yaml one dgx-a100-80gb with `model: { arch: llama, layers: L, hidden: 256, heads: 4, ffnHidden: 512, seqLen:
 * 256, vocab: 1000 }`: L = 10,000 with `--set parallel.pp=4` (32 micro-batches) took 14 s and 1.2 GB, L = 100,000 (8)
 * 77 s and 4 GB), so this keeps a step within about 30 s and 2 GB. The largest published dense models have 126 layers
 * (Llama 3 405B) to 160 (Megatron's 1T): 2,500 micro-batches of them fit, and a 32-layer model the whole 10,000.
 */
export const MAX_LAYER_PASSES = 400_000;

/** Problems for a step too large to simulate: too many micro-batches per replica, layer passes, or GPUs. */
export function simulationLimitProblems(gpus: number, microBatches: number, layers = 1): Problem[] {
  const problems: Problem[] = [];
  const passes = layers * microBatches;
  if (Number.isFinite(passes) && passes > MAX_LAYER_PASSES && microBatches <= MAX_MICRO_BATCHES_PER_STEP) {
    problems.push({
      path: 'model.layers',
      message:
        `${layers.toLocaleString('en-US')} layers × ${Math.round(microBatches).toLocaleString('en-US')} ` +
        `micro-batches per replica = ${Math.round(passes).toLocaleString('en-US')} layer passes, more than the ` +
        `${MAX_LAYER_PASSES.toLocaleString('en-US')} a step may simulate (time and memory grow with them); ` +
        'simulate fewer layers or micro-batches',
    });
  }
  if (gpus > MAX_GPUS) {
    problems.push({
      path: 'cluster.nodes',
      message:
        `${gpus.toLocaleString('en-US')} GPUs is more than the ${MAX_GPUS.toLocaleString('en-US')} the simulator ` +
        'takes (time grows with the cluster); simulate a smaller cluster',
    });
  }
  if (Number.isFinite(microBatches) && microBatches > MAX_MICRO_BATCHES_PER_STEP) {
    problems.push({
      path: 'training.globalBatch',
      message:
        `makes ${Math.round(microBatches).toLocaleString('en-US')} micro-batches per step on each replica ` +
        '(globalBatch / (microBatch × dp)); the simulator runs each one, ' +
        `and more than ${MAX_MICRO_BATCHES_PER_STEP.toLocaleString('en-US')} exhausts its time and memory. ` +
        'Raise training.microBatch, or simulate a smaller ' +
        'globalBatch: past a few micro-batches the step time grows linearly with their number',
    });
  }
  return problems;
}
