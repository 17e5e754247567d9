// CPU backend: the calibration plan on the host. The "device" is the CPU: a GEMM runs on a pool of compute
// threads (like a kernel on all SMs), a copy is a memcpy by a separate copy thread (like a DMA engine), and a
// launch is one dispatch of an empty function to the pool. Collectives are in cpu_collectives.cc.
#include <time.h>

#include <algorithm>
#include <cmath>
#include <atomic>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

#include "cpu_gemm.h"
#include "cpu_pool.h"
#include "item.h"

namespace csim {

void fillRandom(std::vector<float>& v, uint32_t seed) {
  uint32_t x = seed * 2654435761u + 1u;
  for (auto& f : v) {
    x = x * 1664525u + 1013904223u;
    f = static_cast<float>(x >> 8) * (2.0f / 16777216.0f) - 1.0f;
  }
}

namespace {

/**
 * Runs `op` for warm-up, then `repeats` samples of `inner` calls each; a sample is seconds per call, on the clock
 * the item names. The thread clock is only valid when `op` runs on this thread alone (`singleThreaded`).
 */
template <typename Op>
std::vector<double> timeSamples(const BenchItem& it, Op op, bool singleThreaded) {
  const bool thread = it.clock == "thread";
  if (thread && !singleThreaded) throw std::invalid_argument("the thread clock needs work that runs on one thread (threads = 1, no copy thread)");
  if (!thread && it.clock != "wall") throw std::invalid_argument("clock must be wall or thread, not '" + it.clock + "'");
  double (*now)() = thread ? threadCpuS : nowS;
  const int inner = std::max(1, it.inner);
  for (int w = 0; w < it.warmup; w++) op();
  std::vector<double> samples;
  samples.reserve(it.repeats);
  for (int r = 0; r < it.repeats; r++) {
    const double t0 = now();
    for (int i = 0; i < inner; i++) op();
    samples.push_back((now() - t0) / inner);
  }
  return samples;
}

BenchResult gemm(const BenchItem& it) {
  const auto& g = it.gemm;
  if (g.m <= 0 || g.n <= 0 || g.k <= 0) throw std::invalid_argument("gemm: m, n and k must be positive");
  if (it.dtype != "fp32") throw std::invalid_argument("the CPU backend measures fp32 GEMMs only, not " + it.dtype);
  std::vector<float> a(g.m * g.k), b(g.k * g.n), c(g.m * g.n);
  fillRandom(a, 1);
  fillRandom(b, 2);
  Pool pool(it.threads);
  BenchResult res;
  res.samplesS = timeSamples(it, [&] { sgemm(pool, g.m, g.n, g.k, a.data(), b.data(), c.data()); }, it.threads == 1);
  res.notes.push_back({"isa", sgemmIsa()});
  return res;
}

BenchResult launch(const BenchItem& it) {
  Pool pool(it.threads);
  std::atomic<int> sink{0};
  const std::function<void(int)> empty = [&](int w) { sink.fetch_add(w, std::memory_order_relaxed); };
  BenchResult res;
  res.samplesS = timeSamples(it, [&] { pool.run(empty); }, it.threads == 1);
  res.notes.push_back({"method", "dispatch of an empty function to all compute threads and wait"});
  return res;
}

/** Host-to-host memcpy by one thread, cycling through `footprintBytes` so small copies leave the caches. */
BenchResult copy(const BenchItem& it) {
  if (it.direction != "h2h") throw std::invalid_argument("the CPU backend copies host to host (h2h) only, not " + it.direction);
  if (it.bytes <= 0) throw std::invalid_argument("copy: bytes must be positive");
  const int64_t slots = std::max<int64_t>(1, it.footprintBytes / it.bytes);
  std::vector<char> src(slots * it.bytes, 1), dst(slots * it.bytes, 0);
  int64_t i = 0;
  BenchResult res;
  res.samplesS = timeSamples(it, [&] {
    const int64_t off = (i++ % slots) * it.bytes;
    std::memcpy(dst.data() + off, src.data() + off, it.bytes);
  }, true);
  res.extra.push_back({"slots", static_cast<double>(slots)});
  return res;
}

}  // namespace

double sgemmCheck(int threads, int64_t m, int64_t n, int64_t k) {
  std::vector<float> a(m * k), b(k * n), c(m * n);
  fillRandom(a, 11);
  fillRandom(b, 12);
  Pool pool(threads);
  sgemm(pool, m, n, k, a.data(), b.data(), c.data());
  double worst = 0;
  for (int64_t i = 0; i < m; i++) {
    for (int64_t j = 0; j < n; j++) {
      double ref = 0;
      for (int64_t p = 0; p < k; p++) ref += static_cast<double>(a[i * k + p]) * b[p * n + j];
      worst = std::max(worst, std::abs(ref - c[i * n + j]) / std::max<int64_t>(1, k));
    }
  }
  return worst;
}

double threadCpuS() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

BenchResult runCpu(const BenchItem& it) {
  if (it.threads < 1 || it.threads > 1024) throw std::invalid_argument("threads must be between 1 and 1024");
  if (it.kind == "gemm") return gemm(it);
  if (it.kind == "launch") return launch(it);
  if (it.kind == "copy") return copy(it);
  if (it.kind == "program") return runCpuProgram(it);
  if (it.kind == "collective") return runCpuCollective(it);
  throw std::invalid_argument("unknown measurement kind '" + it.kind + "'");
}

}  // namespace csim
