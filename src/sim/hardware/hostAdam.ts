/** How fast a node's CPUs run DeepSpeed's CPU-Adam for optimizer offload, from the host's memory bandwidth. */

/**
 * Bytes DeepSpeed's CPU-Adam moves per parameter and step: it loads the fp32 weight, gradient, momentum and variance
 * (16) and stores the weight, momentum and variance (12) (`Adam_Optimizer::Step_AVX`, csrc/includes/cpu_adam.h).
 */
export const CPU_ADAM_BYTES_PER_PARAM = 28;

/** Fraction of the host's peak DRAM bandwidth a streaming loop over all cores reaches: an estimate (uncertain). */
export const HOST_STREAM_EFFICIENCY = 0.75;

/**
 * Parameters per second the node's CPU-Adam updates, all its processes together: the update is a stream over the
 * optimizer state, so it is bound by the host's memory bandwidth (peak, GB/s: channels × transfer rate × 8 bytes
 * per socket), not by its cores.
 */
export function cpuAdamParamsPerS(hostMemoryBandwidthGBps: number): number {
  return (hostMemoryBandwidthGBps * 1e9 * HOST_STREAM_EFFICIENCY) / CPU_ADAM_BYTES_PER_PARAM;
}
