// A fixed set of worker threads that run one function together, like a kernel launch on all SMs, plus a
// barrier for collectives between threads. Waiting spins briefly, then sleeps or yields, so an oversubscribed
// (shared) machine does not burn whole time slices spinning.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace csim {

/** Busy-wait hint to the CPU. */
inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

class Pool {
 public:
  /** `threads` workers in all; the caller of run() is worker 0, so threads − 1 are started. */
  explicit Pool(int threads);
  ~Pool();
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  /** Runs fn(worker) on every worker and returns when all have finished. */
  void run(const std::function<void(int)>& fn);
  int size() const { return static_cast<int>(workers_.size()) + 1; }

 private:
  void loop(int id);

  std::vector<std::thread> workers_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0};
  const std::function<void(int)>* fn_ = nullptr;
  std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<bool> stop_{false};
};

/** Sense-reversing barrier for `count` threads. */
class Barrier {
 public:
  explicit Barrier(int count) : count_(count), waiting_(count) {}
  void wait();

 private:
  const int count_;
  std::atomic<int> waiting_;
  std::atomic<uint32_t> sense_{0};
};

}  // namespace csim
