// Multi-threaded blocked single-precision GEMM (our own kernel, no BLAS).
#pragma once

#include <cstdint>

#include "cpu_pool.h"

namespace csim {

/**
 * Output tile one worker computes at a time (rows × columns of C). Every tile costs the same whether or not it
 * sticks out of C (its operands are zero-padded), so the time follows tile and wave quantisation exactly as the
 * simulator's GEMM model assumes: waves = ceil(tiles / threads), each tile a fixed cost plus a cost per unit of k.
 */
constexpr int kTileM = 96;
constexpr int kTileN = 128;

/** C = A·B with row-major A (m×k), B (k×n), C (m×n), over all workers of `pool`. */
void sgemm(Pool& pool, int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c);

/** Largest |C − reference| / (k · max|A|·max|B|) of sgemm against a plain triple loop on random data (tests). */
double sgemmCheck(int threads, int64_t m, int64_t n, int64_t k);

/** Which micro-kernel the running CPU uses: "avx2-fma" or "generic". */
const char* sgemmIsa();

}  // namespace csim
