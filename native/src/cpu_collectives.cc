// Collectives between threads over shared memory, as rings (Patarasuk & Yuan 2009, the algorithm NCCL's ring
// uses): each thread stands for a GPU with its own buffer; in each step it reads one chunk from its ring
// predecessor's buffer and adds it to (reduce-scatter) or copies it into (all-gather) its own. A barrier
// separates the steps, as the flags of NCCL's ring protocol do.
#include <algorithm>
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
 * the input for reduce-scatter (float32 elements). Thread 0 times each sample between barriers.
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
  BenchResult res;
  res.samplesS.resize(it.repeats);
  auto worker = [&](int r) {
    // Every rank runs the same sequence of operations, so each knows the slot without talking to the others;
    // the barrier that ends an operation's last step keeps the next one from overtaking it.
    int64_t op = 0;
    auto once = [&] { body(ring, r, (op++ % ring.slots) * ring.count); };
    for (int w = 0; w < it.warmup; w++) once();
    for (int rep = 0; rep < it.repeats; rep++) {
      ring.barrier.wait();
      const double t0 = nowS();
      for (int i = 0; i < inner; i++) once();
      ring.barrier.wait();
      if (r == 0) res.samplesS[rep] = (nowS() - t0) / inner;
    }
  };
  std::vector<std::thread> threads;
  for (int r = 1; r < it.ranks; r++) threads.emplace_back(worker, r);
  worker(0);
  for (auto& t : threads) t.join();
  res.notes.push_back({"algorithm", "ring"});
  return res;
}

}  // namespace csim
