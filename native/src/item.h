// One measurement request from JavaScript and its raw result. Sizes are in elements or bytes; every time
// that crosses back to JavaScript is in seconds.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace csim {

/** C[m×n] = A[m×k]·B[k×n]. */
struct GemmDims {
  int64_t m = 0, n = 0, k = 0;
};

/** A copy in a program: `bytes` long, started once GEMM number `after` has finished (-1: at once). */
struct CopyStep {
  int64_t bytes = 0;
  int after = -1;
};

/**
 * kind: gemm | copy | launch | collective | program.
 * A sample is the time of one operation: `inner` operations run back to back and the total is divided by `inner`.
 * A program (GEMMs on the compute stream, copies on a copy stream) is one operation.
 */
struct BenchItem {
  std::string kind;
  std::string dtype = "fp32";
  GemmDims gemm;
  std::string direction;  // h2d | d2h | d2d | h2h
  bool pinned = true;
  int64_t bytes = 0;
  /** Bytes the copy benchmark cycles its buffers through, so small copies do not stay in cache (0: no cycling). */
  int64_t footprintBytes = 0;
  std::string op;  // all_reduce | all_gather | reduce_scatter
  int ranks = 1;
  std::vector<GemmDims> gemms;
  std::vector<CopyStep> copies;
  std::string run = "both";  // program: both | compute | copy
  int threads = 1;
  /**
   * CPU backend: "wall" (steady clock) or "thread" (CPU time of the thread that runs the work, so the time the OS
   * gives other processes is not counted; only for work that runs on that one thread).
   */
  std::string clock = "wall";
  int device = 0;
  int warmup = 1;
  int repeats = 5;
  int inner = 1;
};

/** Raw samples plus named numbers and notes (e.g. which method timed a launch). */
struct BenchResult {
  std::vector<double> samplesS;
  std::vector<std::pair<std::string, double>> extra;
  std::vector<std::pair<std::string, std::string>> notes;
};

/** Wall-clock seconds from a monotonic clock. */
inline double nowS() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

/** CPU seconds the calling thread has run (CLOCK_THREAD_CPUTIME_ID). */
double threadCpuS();

BenchResult runCpu(const BenchItem& item);
BenchResult runCpuCollective(const BenchItem& item);
BenchResult runCpuProgram(const BenchItem& item);
/** Runs one collective on known data and returns the largest deviation from the exact result (tests). */
double cpuCollectiveCheck(const std::string& op, int ranks, int64_t floats);
/** Fills with pseudo-random values in [-1, 1): real data, not zeros, so no fast path is measured. */
void fillRandom(std::vector<float>& v, uint32_t seed);

}  // namespace csim
