// CPU programs: GEMMs in order on the compute thread(s) while a copy thread runs memcpys, copy j starting once
// GEMM `after` is done (as a copy stream waits on an event): a backward pass whose gradient-bucket copies
// overlap compute, the CPU way.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

#include "cpu_gemm.h"
#include "cpu_pool.h"
#include "item.h"

namespace csim {

/**
 * One sample is one run of the program. Wall clock: from start to the last op's end. Thread clock: each op's CPU
 * time is measured on the thread that runs it (both threads run concurrently, so interference between them is
 * in those times), and the sample is the critical path through them: GEMMs back to back, copy j after both GEMM
 * `after` and copy j − 1. That is the program's time on a machine where both engines run uninterrupted, which a
 * GPU's compute and copy engines do but two threads on a shared CPU do not.
 */
BenchResult runCpuProgram(const BenchItem& it) {
  const bool replay = it.clock == "thread";
  if (!replay && it.clock != "wall") throw std::invalid_argument("clock must be wall or thread, not '" + it.clock + "'");
  if (replay && it.threads != 1) throw std::invalid_argument("the thread clock needs one compute thread");
  int64_t aBig = 1, bBig = 1, cBig = 1;
  for (const auto& g : it.gemms) {
    aBig = std::max(aBig, g.m * g.k);
    bBig = std::max(bBig, g.k * g.n);
    cBig = std::max(cBig, g.m * g.n);
  }
  std::vector<float> a(aBig), b(bBig), c(cBig);
  fillRandom(a, 3);
  fillRandom(b, 4);
  std::vector<std::vector<char>> src, dst;
  for (const auto& cp : it.copies) {
    src.emplace_back(cp.bytes, 1);
    dst.emplace_back(cp.bytes, 0);
  }
  const bool doCompute = it.run != "copy";
  const bool doCopy = it.run != "compute" && !it.copies.empty();
  Pool pool(it.threads);
  std::atomic<int> done{0};
  std::vector<double> gemmS(it.gemms.size(), 0.0), copyS(it.copies.size(), 0.0);

  auto once = [&]() -> double {
    done.store(doCompute ? 0 : static_cast<int>(it.gemms.size()), std::memory_order_release);
    const double w0 = nowS();
    std::thread copier;
    if (doCopy) {
      copier = std::thread([&] {
        for (size_t j = 0; j < it.copies.size(); j++) {
          for (int spin = 0; done.load(std::memory_order_acquire) <= it.copies[j].after; spin++) {
            if (spin < 2000) cpuRelax();
            else std::this_thread::yield();
          }
          const double c0 = threadCpuS();
          std::memcpy(dst[j].data(), src[j].data(), it.copies[j].bytes);
          copyS[j] = threadCpuS() - c0;
        }
      });
    }
    for (size_t i = 0; doCompute && i < it.gemms.size(); i++) {
      const auto& g = it.gemms[i];
      const double c0 = threadCpuS();
      sgemm(pool, g.m, g.n, g.k, a.data(), b.data(), c.data());
      gemmS[i] = threadCpuS() - c0;
      done.store(static_cast<int>(i) + 1, std::memory_order_release);
    }
    if (copier.joinable()) copier.join();
    if (!replay) return nowS() - w0;
    std::vector<double> end(it.gemms.size(), 0.0);
    double compute = 0, copy = 0;
    for (size_t i = 0; doCompute && i < it.gemms.size(); i++) end[i] = compute += gemmS[i];
    for (size_t j = 0; doCopy && j < it.copies.size(); j++) {
      const int after = it.copies[j].after;
      copy = std::max(copy, doCompute && after >= 0 ? end[after] : 0.0) + copyS[j];
    }
    return std::max(compute, copy);
  };

  for (int w = 0; w < it.warmup; w++) once();
  BenchResult res;
  for (int r = 0; r < it.repeats; r++) res.samplesS.push_back(once());
  res.notes.push_back({"timing", replay ? "critical path of per-op thread CPU times" : "wall clock"});
  return res;
}

}  // namespace csim
