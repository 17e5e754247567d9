// Per-GPU state the CUDA backend keeps between measurements: streams, events, a cuBLAS handle, buffers.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "cuda_api.h"
#include "item.h"

namespace csim {

/** A device allocation that only grows. */
struct DeviceBuffer {
  void* ptr = nullptr;
  size_t bytes = 0;
  /** Makes the buffer at least `need` bytes; returns true if it was (re)allocated. */
  bool reserve(size_t need);
};

struct DeviceState {
  int index = 0;
  cudaStream compute = nullptr;
  cudaStream copy = nullptr;
  cudaEvent start = nullptr;
  cudaEvent stop = nullptr;
  void* blas = nullptr;
  /** Empty kernel from PTX through the driver API, or null when libcuda is not available. */
  void* noopKernel = nullptr;
  /** Random operands per element type ("f32", "f16", "bf16"); A and B both read from it. */
  std::map<std::string, DeviceBuffer> operands;
  DeviceBuffer out;
  DeviceBuffer src;
  DeviceBuffer dst;
};

/** Makes `index` current on this thread and returns its state, creating it on first use. */
DeviceState& useDevice(int index);
/** Milliseconds between the two events of `d`, in seconds. */
double elapsedS(cudaEvent a, cudaEvent b);

BenchResult runCuda(const BenchItem& item);
BenchResult runNccl(const BenchItem& item);

/** Machine facts: devices, versions. Each entry is a (key, value) string pair; devices are "device.N.field". */
std::vector<std::pair<std::string, std::string>> cudaDescribe();

}  // namespace csim
