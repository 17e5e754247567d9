// Collectives between threads over shared memory, as rings (Patarasuk & Yuan 2009, the algorithm NCCL's ring
// uses): each thread stands for a GPU with its own buffer; in each step it reads one chunk from its ring
// predecessor's buffer and adds it to (reduce-scatter) or copies it into (all-gather) its own. A barrier
// separates the steps, as the flags of NCCL's ring protocol do.
#include <algorithm>
#include <cmath>
#include <string>
#include <stdexcept>
#include <thread>
#include <vector>

#include "cpu_pool.h"
#include "item.h"

namespace csim {

namespace {

/**
 * Each rank's buffer is one of `slots` consecutive buffers of `count` floats; successive operations use the next
 * slot, so that with a footprint larger than the caches every operation reads and writes memory, as a GPU
 * collective's buffers are in HBM, rather than timing the same few cached bytes over and over.
 */
struct Ring {
  int n;
  int64_t count;  // floats per rank buffer
  int64_t slots;
  std::vector<std::vector<float>> buf;
  Barrier barrier;
  Ring(int ranks, int64_t floats, int64_t slotCount)
      : n(ranks), count(floats), slots(slotCount), buf(ranks, std::vector<float>(floats * slotCount, 1.0f)), barrier(ranks) {}
  int64_t begin(int chunk) const { return count * chunk / n; }
  int64_t end(int chunk) const { return count * (chunk + 1) / n; }
};

inline int mod(int a, int n) { return ((a % n) + n) % n; }

void addChunk(float* __restrict dst, const float* __restrict src, int64_t len) {
  for (int64_t i = 0; i < len; i++) dst[i] += src[i];
}

void copyChunk(float* __restrict dst, const float* __restrict src, int64_t len) { std::copy(src, src + len, dst); }

/** n − 1 steps; afterwards rank r holds the sum of chunk (r + 1) mod n. */
void reduceScatter(Ring& g, int r, int64_t base) {
  const int prev = mod(r - 1, g.n);
  for (int s = 0; s < g.n - 1; s++) {
    const int c = mod(r - 1 - s, g.n);
    addChunk(g.buf[r].data() + base + g.begin(c), g.buf[prev].data() + base + g.begin(c), g.end(c) - g.begin(c));
    g.barrier.wait();
  }
}

/** n − 1 steps; rank r starts out holding chunk r + shift (shift 0 standalone, 1 after a reduce-scatter). */
void allGather(Ring& g, int r, int64_t base, int shift) {
  const int prev = mod(r - 1, g.n);
  for (int s = 0; s < g.n - 1; s++) {
    const int c = mod(r - 1 - s + shift, g.n);
    copyChunk(g.buf[r].data() + base + g.begin(c), g.buf[prev].data() + base + g.begin(c), g.end(c) - g.begin(c));
    g.barrier.wait();
  }
}

}  // namespace

/**
 * Sizes follow nccl-tests: `bytes` is the whole buffer for all-reduce, the gathered output for all-gather and
 * the input for reduce-scatter (float32 elements). With the wall clock thread 0 times each sample between
 * barriers; with the thread clock each rank times its own CPU time and a sample is the slowest rank's, so time
 * a rank spent descheduled (a shared machine) is not counted while the work and the barrier waits are.
 */
BenchResult runCpuCollective(const BenchItem& it) {
  if (it.ranks < 2 || it.ranks > 256) throw std::invalid_argument("collective: ranks must be between 2 and 256");
  if (it.bytes < 4 * it.ranks) throw std::invalid_argument("collective: bytes must be at least 4 × ranks");
  void (*body)(Ring&, int, int64_t);
  if (it.op == "all_reduce") body = [](Ring& g, int r, int64_t b) { reduceScatter(g, r, b); allGather(g, r, b, 1); };
  else if (it.op == "all_gather") body = [](Ring& g, int r, int64_t b) { allGather(g, r, b, 0); };
  else if (it.op == "reduce_scatter") body = [](Ring& g, int r, int64_t b) { reduceScatter(g, r, b); };
  else throw std::invalid_argument("collective: unknown op '" + it.op + "'");

  const int64_t slots = std::max<int64_t>(1, it.footprintBytes / it.bytes);
  Ring ring(it.ranks, it.bytes / 4, slots);
  const int inner = std::max(1, it.inner);
  const bool threadClock = it.clock == "thread";
  if (!threadClock && it.clock != "wall") throw std::invalid_argument("clock must be wall or thread, not '" + it.clock + "'");
  double (*now)() = threadClock ? threadCpuS : nowS;
  std::vector<std::vector<double>> perRank(it.ranks, std::vector<double>(it.repeats, 0.0));
  BenchResult res;
  auto worker = [&](int r) {
    // Every rank runs the same sequence of operations, so each knows the slot without talking to the others;
    // the barrier that ends an operation's last step keeps the next one from overtaking it.
    int64_t op = 0;
    auto once = [&] { body(ring, r, (op++ % ring.slots) * ring.count); };
    for (int w = 0; w < it.warmup; w++) once();
    for (int rep = 0; rep < it.repeats; rep++) {
      ring.barrier.wait();
      const double t0 = now();
      for (int i = 0; i < inner; i++) once();
      ring.barrier.wait();
      perRank[r][rep] = (now() - t0) / inner;
    }
  };
  std::vector<std::thread> threads;
  for (int r = 1; r < it.ranks; r++) threads.emplace_back(worker, r);
  worker(0);
  for (auto& t : threads) t.join();
  for (int rep = 0; rep < it.repeats; rep++) {
    double slowest = 0;
    for (int r = 0; r < it.ranks; r++) slowest = std::max(slowest, threadClock ? perRank[r][rep] : perRank[0][rep]);
    res.samplesS.push_back(slowest);
  }
  res.notes.push_back({"algorithm", "ring"});
  return res;
}

double cpuCollectiveCheck(const std::string& op, int ranks, int64_t floats) {
  if (ranks < 2 || floats < ranks) throw std::invalid_argument("check: need ranks ≥ 2 and floats ≥ ranks");
  Ring ring(ranks, floats, 1);
  // Rank r's element i holds (r + 1) · (i % 7 + 1); rank r owns chunk r for a standalone all-gather.
  for (int r = 0; r < ranks; r++) {
    for (int64_t i = 0; i < floats; i++) ring.buf[r][i] = static_cast<float>((r + 1) * (i % 7 + 1));
  }
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; r++) {
    threads.emplace_back([&, r] {
      if (op == "all_reduce") { reduceScatter(ring, r, 0); allGather(ring, r, 0, 1); }
      else if (op == "all_gather") allGather(ring, r, 0, 0);
      else reduceScatter(ring, r, 0);
    });
  }
  for (auto& t : threads) t.join();
  const double sum = ranks * (ranks + 1) / 2.0;
  double worst = 0;
  for (int r = 0; r < ranks; r++) {
    for (int c = 0; c < ranks; c++) {
      // What rank r must hold in chunk c afterwards (reduce-scatter: only its own reduced chunk, r + 1).
      if (op == "reduce_scatter" && c != (r + 1) % ranks) continue;
      for (int64_t i = ring.begin(c); i < ring.end(c); i++) {
        const double base = static_cast<double>(i % 7 + 1);
        const double want = op == "all_gather" ? (c + 1) * base : sum * base;
        worst = std::max(worst, std::abs(ring.buf[r][i] - want));
      }
    }
  }
  return worst;
}

}  // namespace csim
