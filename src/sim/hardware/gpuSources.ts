/** Units and source strings the GPU presets share. */

export const MiB = 1024 * 1024;

/** Stas Bekman's "Maximum Achievable Matmul FLOPS" table: the best GEMM shape found by a brute-force search. */
export const MAMF = 'ml-engineering MAMF table (github.com/stas00/ml-engineering compute/accelerator/README.md)';

export const LAUNCH = 'launch overhead ~4-5 µs: estimate from published dispatch measurements, calibrate';
