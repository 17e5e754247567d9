/**
 * The fraction of its short-burst GEMM rate (`GpuSpec.gemmCeiling`, timed over milliseconds) that a GPU sustains for
 * the GEMMs of a training step, one global constant per GPU generation. Two mechanisms sit in it, and no public source
 * separates them per kernel: over seconds of load the SM clock falls to what the power cap allows (an H200 here: a
 * GEMM loop sustains 0.80 of its millisecond samples, 692 W at a median 1.5 GHz of its 1.98,
 * reports/calibration/h200/sustained-gemm.json), and the shapes of real layers run below the best shape the ceilings
 * were found at. A layer of a training step loses less than a pure GEMM loop, since the memory-bound kernels between
 * its GEMMs let the clock recover.
 *
 * These are the project's fitted constants (the accuracy discipline allows a few per GPU generation). Each is the least
 * mean squared relative error over its declared training subset and nothing else (`npm run validate -- --fit`,
 * src/validation/fittedConstants.ts, where a test holds these values to the fit); every validation set of step times is
 * reported out of sample:
 * - Ampere: Korthikanti et al. 2022 (arXiv 2205.05198) Table 4, one 22B GPT layer's forward and backward on A100 80 GB
 *   under Megatron-LM in five recompute and sequence-parallel settings;
 * - Hopper: the four eager Llama layer timings measured on one H200 (reports/calibration/h200/llama-layer.json, forward
 *   and backward of Llama-2-7B at 4k and Llama-3-8B at 8k), applied to the H100 as the same GH100 die at the same
 *   700 W.
 */
export const SUSTAINED_GEMM_FRACTION = {
  ampere: 0.902,
  hopper: 0.889,
} as const;

/**
 * For a generation with no declared training subset (Ada, Blackwell, AMD's CDNA 3 and 4: no measured layer timings or
 * runs here), Hopper's fraction is assumed: the nearest generation with the same mechanism (a power cap below what a
 * full tensor load draws). An assumption, not a fit; the summary's GEMM ceiling line says so (cli/simulateCommand.ts).
 */
export const ASSUMED_SUSTAINED_GEMM_FRACTION = SUSTAINED_GEMM_FRACTION.hopper;
