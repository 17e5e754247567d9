// Blocked SGEMM in the usual GotoBLAS shape: pack a block of A and a panel of B (zero-padded to whole
// micro-panels), then run a 6×16 register-blocked micro-kernel over the tile. The micro-kernel is written with
// GCC vector extensions and compiled twice, for AVX2+FMA CPUs and for any x86-64, so one binary runs (fast or plain) on any x86-64.
#include "cpu_gemm.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace csim {

namespace {

constexpr int kMr = 6;
constexpr int kNr = 16;
constexpr int kKc = 256;
static_assert(kTileM % kMr == 0 && kTileN % kNr == 0, "tile must hold whole micro-tiles");

typedef float v8f __attribute__((vector_size(32)));

/** Per-thread packing buffers and the tile accumulator, 64-byte aligned. */
struct Scratch {
  float* ap;
  float* bp;
  float* ct;
  Scratch() {
    ap = alloc(kTileM * kKc);
    bp = alloc(kKc * kTileN);
    ct = alloc(kTileM * kTileN);
  }
  ~Scratch() {
    std::free(ap);
    std::free(bp);
    std::free(ct);
  }
  static float* alloc(size_t n) {
    void* p = nullptr;
    if (posix_memalign(&p, 64, n * sizeof(float)) != 0) throw std::bad_alloc();
    return static_cast<float*>(p);
  }
};

Scratch& scratch() {
  thread_local std::unique_ptr<Scratch> s;
  if (!s) s.reset(new Scratch());
  return *s;
}

inline __attribute__((always_inline)) v8f load8(const float* p) {
  v8f v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

inline __attribute__((always_inline)) void store8(float* p, v8f v) { std::memcpy(p, &v, sizeof v); }

/** c[6×16] (=|+=) a-panel (kc×6) · b-panel (kc×16). */
inline __attribute__((always_inline)) void micro(int kc, const float* __restrict a, const float* __restrict b,
                                                 float* __restrict c, int ldc, bool accumulate) {
  v8f r[kMr][2];
  for (int i = 0; i < kMr; i++) r[i][0] = r[i][1] = v8f{};
  for (int p = 0; p < kc; p++) {
    const v8f b0 = load8(b), b1 = load8(b + 8);
    for (int i = 0; i < kMr; i++) {
      r[i][0] += b0 * a[i];
      r[i][1] += b1 * a[i];
    }
    a += kMr;
    b += kNr;
  }
  for (int i = 0; i < kMr; i++) {
    float* row = c + i * ldc;
    if (accumulate) {
      r[i][0] += load8(row);
      r[i][1] += load8(row + 8);
    }
    store8(row, r[i][0]);
    store8(row + 8, r[i][1]);
  }
}

/** All micro-tiles of one output tile for one k-block. */
#define CSIM_TILE_BODY                                                                                            \
  for (int ir = 0; ir < kTileM / kMr; ir++) {                                                                     \
    for (int jr = 0; jr < kTileN / kNr; jr++) {                                                                   \
      micro(kc, ap + ir * kMr * kc, bp + jr * kNr * kc, ct + ir * kMr * kTileN + jr * kNr, kTileN, accumulate); \
    }                                                                                                             \
  }

void tileBlockGeneric(int kc, const float* ap, const float* bp, float* ct, bool accumulate) { CSIM_TILE_BODY }

#if defined(__x86_64__) && defined(__GNUC__)
#define CSIM_X86 1
/** The same loop compiled for AVX2 + FMA; chosen at run time (not target_clones: its "arch=" check is by model). */
__attribute__((target("avx2,fma"))) void tileBlockAvx2(int kc, const float* ap, const float* bp, float* ct,
                                                       bool accumulate) {
  CSIM_TILE_BODY
}

bool hasAvx2Fma() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#endif

using TileFn = void (*)(int, const float*, const float*, float*, bool);

TileFn tileBlockFn() {
#ifdef CSIM_X86
  static const TileFn fn = hasAvx2Fma() ? tileBlockAvx2 : tileBlockGeneric;
  return fn;
#else
  return tileBlockGeneric;
#endif
}

/** Packs rows i0..i0+rows of A (row-major, leading dimension lda), columns kk..kk+kc, into 6-row panels. */
void packA(const float* a, int64_t lda, int64_t i0, int rows, int64_t kk, int kc, float* ap) {
  for (int ir = 0; ir < kTileM / kMr; ir++) {
    float* dst = ap + ir * kMr * kc;
    for (int i = 0; i < kMr; i++) {
      const int row = ir * kMr + i;
      if (row < rows) {
        const float* src = a + (i0 + row) * lda + kk;
        for (int p = 0; p < kc; p++) dst[p * kMr + i] = src[p];
      } else {
        for (int p = 0; p < kc; p++) dst[p * kMr + i] = 0.0f;
      }
    }
  }
}

/** Packs rows kk..kk+kc of B, columns j0..j0+cols, into 16-column panels (row by row: source rows are read in order). */
void packB(const float* b, int64_t ldb, int64_t kk, int kc, int64_t j0, int cols, float* bp) {
  for (int p = 0; p < kc; p++) {
    const float* src = b + (kk + p) * ldb + j0;
    for (int jr = 0; jr < kTileN / kNr; jr++) {
      float* d = bp + jr * kNr * kc + p * kNr;
      const int c0 = jr * kNr;
      const int valid = std::max(0, std::min(kNr, cols - c0));
      std::memcpy(d, src + c0, sizeof(float) * valid);
      for (int j = valid; j < kNr; j++) d[j] = 0.0f;
    }
  }
}

void oneTile(int64_t ti, int64_t tj, int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c) {
  Scratch& s = scratch();
  const int64_t i0 = ti * kTileM, j0 = tj * kTileN;
  const int rows = static_cast<int>(std::min<int64_t>(kTileM, m - i0));
  const int cols = static_cast<int>(std::min<int64_t>(kTileN, n - j0));
  const TileFn tileBlock = tileBlockFn();
  if (k == 0) std::memset(s.ct, 0, sizeof(float) * kTileM * kTileN);
  for (int64_t kk = 0; kk < k; kk += kKc) {
    const int kc = static_cast<int>(std::min<int64_t>(kKc, k - kk));
    packA(a, k, i0, rows, kk, kc, s.ap);
    packB(b, n, kk, kc, j0, cols, s.bp);
    tileBlock(kc, s.ap, s.bp, s.ct, kk > 0);
  }
  for (int i = 0; i < rows; i++) std::memcpy(c + (i0 + i) * n + j0, s.ct + i * kTileN, sizeof(float) * cols);
}

}  // namespace

void sgemm(Pool& pool, int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c) {
  if (m <= 0 || n <= 0) return;
  const int64_t tilesM = (m + kTileM - 1) / kTileM;
  const int64_t tilesN = (n + kTileN - 1) / kTileN;
  const int64_t tiles = tilesM * tilesN;
  std::atomic<int64_t> next{0};
  pool.run([&](int) {
    for (int64_t t; (t = next.fetch_add(1, std::memory_order_relaxed)) < tiles;) {
      oneTile(t / tilesN, t % tilesN, m, n, k, a, b, c);
    }
  });
}

const char* sgemmIsa() {
#ifdef CSIM_X86
  return hasAvx2Fma() ? "avx2-fma" : "generic";
#else
  return "generic";
#endif
}

}  // namespace csim
