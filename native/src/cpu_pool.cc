#include "cpu_pool.h"

namespace csim {

namespace {
/** Spins before a pool worker sleeps: about a millisecond, enough to catch back-to-back launches. */
constexpr int kSpins = 20000;
/**
 * Spins before a barrier waiter starts yielding: a few microseconds. A partner that is running arrives within
 * that; one the OS has descheduled may take a time slice, better spent yielding than burning the CPU (and, with
 * the thread clock, better not counted as work).
 */
constexpr int kBarrierSpins = 256;
}  // namespace

Pool::Pool(int threads) {
  if (threads < 1) threads = 1;
  for (int i = 1; i < threads; i++) workers_.emplace_back([this, i] { loop(i); });
}

Pool::~Pool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_.store(true, std::memory_order_release);
    generation_.fetch_add(1, std::memory_order_release);
  }
  cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void Pool::run(const std::function<void(int)>& fn) {
  if (workers_.empty()) {
    fn(0);
    return;
  }
  fn_ = &fn;
  pending_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(mu_);
    generation_.fetch_add(1, std::memory_order_release);
  }
  cv_.notify_all();
  fn(0);
  for (int spin = 0; pending_.load(std::memory_order_acquire) != 0; spin++) {
    if (spin < kSpins) cpuRelax();
    else std::this_thread::yield();
  }
}

void Pool::loop(int id) {
  uint64_t seen = 0;
  for (;;) {
    int spin = 0;
    uint64_t g;
    while ((g = generation_.load(std::memory_order_acquire)) == seen && spin < kSpins) {
      cpuRelax();
      spin++;
    }
    if (g == seen) {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return generation_.load(std::memory_order_acquire) != seen; });
      g = generation_.load(std::memory_order_acquire);
    }
    if (stop_.load(std::memory_order_acquire)) return;
    seen = g;
    (*fn_)(id);
    pending_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

void Barrier::wait() {
  const uint32_t sense = sense_.load(std::memory_order_acquire);
  if (waiting_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    waiting_.store(count_, std::memory_order_relaxed);
    sense_.store(sense + 1, std::memory_order_release);
    return;
  }
  for (int spin = 0; sense_.load(std::memory_order_acquire) == sense; spin++) {
    if (spin < kBarrierSpins) cpuRelax();
    else std::this_thread::yield();
  }
}

}  // namespace csim
