// CUDA backend microbenchmarks, timed with CUDA events after warm-up: cuBLAS GEMMs per dtype, copies
// (D2D, H2D/D2H pinned and pageable), kernel launches, and programs (GEMMs on one stream, copies on another).
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "cuda_device.h"

namespace csim {

namespace {

// cudaMemcpyKind
constexpr int kH2D = 1, kD2H = 2, kD2D = 3;
// cudaDataType: CUDA_R_32F, CUDA_R_16F, CUDA_R_16BF; cublasComputeType_t: 32F, 32F_FAST_TF32
constexpr int kR32F = 0, kR16F = 2, kR16BF = 14, kCompute32F = 68, kCompute32FFastTf32 = 77;

struct GemmType {
  int dataType, computeType, elemBytes;
  const char* operandKey;
};

GemmType gemmType(const std::string& dtype) {
  if (dtype == "fp32") return {kR32F, kCompute32F, 4, "f32"};
  if (dtype == "tf32") return {kR32F, kCompute32FFastTf32, 4, "f32"};
  if (dtype == "fp16") return {kR16F, kCompute32F, 2, "f16"};
  if (dtype == "bf16") return {kR16BF, kCompute32F, 2, "bf16"};
  throw std::invalid_argument("gemm: unsupported dtype '" + dtype + "' (fp32, tf32, fp16, bf16)");
}

/** Host bit patterns of values in ±[0.5, 1) for the element type, so no zero or denormal fast path is timed. */
std::vector<unsigned char> randomHost(const std::string& key, size_t bytes) {
  std::vector<unsigned char> h(bytes);
  uint32_t x = 12345u;
  auto next = [&] { return x = x * 1664525u + 1013904223u; };
  if (key == "f32") {
    for (size_t i = 0; i + 4 <= bytes; i += 4) {
      const float f = (static_cast<float>(next() >> 8) / 16777216.0f) * 2.0f - 1.0f;
      std::memcpy(&h[i], &f, 4);
    }
  } else {
    const uint16_t mask = key == "f16" ? 0x83FF : 0x807F, base = key == "f16" ? 0x3800 : 0x3F00;
    for (size_t i = 0; i + 2 <= bytes; i += 2) {
      const uint16_t v = static_cast<uint16_t>((next() >> 8) & mask) | base;
      std::memcpy(&h[i], &v, 2);
    }
  }
  return h;
}

template <typename Op>
std::vector<double> eventSamples(DeviceState& d, cudaStream s, const BenchItem& it, Op op) {
  const CudaApi& c = cuda();
  const int inner = std::max(1, it.inner);
  for (int w = 0; w < it.warmup; w++) op();
  cudaCheck(c.cudaStreamSynchronize(s), "cudaStreamSynchronize");
  std::vector<double> samples;
  for (int r = 0; r < it.repeats; r++) {
    cudaCheck(c.cudaEventRecord(d.start, s), "cudaEventRecord");
    for (int i = 0; i < inner; i++) op();
    cudaCheck(c.cudaEventRecord(d.stop, s), "cudaEventRecord");
    cudaCheck(c.cudaEventSynchronize(d.stop), "cudaEventSynchronize");
    samples.push_back(elapsedS(d.start, d.stop) / inner);
  }
  return samples;
}

void runGemm(DeviceState& d, const GemmType& t, const GemmDims& g, void* a, void* b, void* out) {
  const float alpha = 1.0f, beta = 0.0f;
  const int m = static_cast<int>(g.m), n = static_cast<int>(g.n), k = static_cast<int>(g.k);
  cublasCheck(cuda().cublasGemmEx(d.blas, 0, 0, m, n, k, &alpha, a, t.dataType, m, b, t.dataType, k, &beta, out,
                                  t.dataType, m, t.computeType, -1),
              "cublasGemmEx");
}

/** Random operands for GEMMs up to `elems` elements per operand, and an output of `outElems`. */
void prepareGemm(DeviceState& d, const GemmType& t, int64_t elems, int64_t outElems) {
  DeviceBuffer& buf = d.operands[t.operandKey];
  if (buf.reserve(static_cast<size_t>(elems) * t.elemBytes)) {
    const auto host = randomHost(t.operandKey, buf.bytes);
    cudaCheck(cuda().cudaMemcpy(buf.ptr, host.data(), buf.bytes, kH2D), "cudaMemcpy (operands)");
  }
  d.out.reserve(static_cast<size_t>(outElems) * t.elemBytes);
}

BenchResult gemm(const BenchItem& it) {
  DeviceState& d = useDevice(it.device);
  const GemmType t = gemmType(it.dtype);
  const auto& g = it.gemm;
  if (g.m <= 0 || g.n <= 0 || g.k <= 0) throw std::invalid_argument("gemm: m, n and k must be positive");
  prepareGemm(d, t, std::max(g.m * g.k, g.k * g.n), g.m * g.n);
  void* ab = d.operands[t.operandKey].ptr;
  BenchResult res;
  res.samplesS = eventSamples(d, d.compute, it, [&] { runGemm(d, t, g, ab, ab, d.out.ptr); });
  return res;
}

BenchResult copy(const BenchItem& it) {
  DeviceState& d = useDevice(it.device);
  const CudaApi& c = cuda();
  if (it.bytes <= 0) throw std::invalid_argument("copy: bytes must be positive");
  const int kind = it.direction == "h2d" ? kH2D : it.direction == "d2h" ? kD2H : it.direction == "d2d" ? kD2D : -1;
  if (kind < 0) throw std::invalid_argument("copy: direction must be h2d, d2h or d2d, not '" + it.direction + "'");
  const int64_t slots = kind == kD2D ? std::max<int64_t>(1, it.footprintBytes / it.bytes) : 1;
  const size_t span = static_cast<size_t>(slots * it.bytes);
  void* host = nullptr;
  std::vector<char> pageable;
  if (kind != kD2D) {
    if (it.pinned) cudaCheck(c.cudaMallocHost(&host, span), "cudaMallocHost");
    else {
      pageable.assign(span, 1);
      host = pageable.data();
    }
  }
  d.src.reserve(span);
  d.dst.reserve(span);
  int64_t i = 0;
  BenchResult res;
  try {
    res.samplesS = eventSamples(d, d.copy, it, [&] {
      const size_t off = static_cast<size_t>((i++ % slots) * it.bytes);
      char* dsrc = static_cast<char*>(d.src.ptr) + off;
      char* ddst = static_cast<char*>(d.dst.ptr) + off;
      char* h = static_cast<char*>(host) + (kind == kD2D ? 0 : off);
      void* to = kind == kH2D ? static_cast<void*>(ddst) : kind == kD2H ? static_cast<void*>(h) : ddst;
      const void* from = kind == kH2D ? static_cast<const void*>(h) : dsrc;
      cudaCheck(c.cudaMemcpyAsync(to, from, it.bytes, kind, d.copy), "cudaMemcpyAsync");
    });
  } catch (...) {
    if (it.pinned && host) c.cudaFreeHost(host);
    throw;
  }
  if (it.pinned && host) c.cudaFreeHost(host);
  return res;
}

BenchResult launch(const BenchItem& it) {
  DeviceState& d = useDevice(it.device);
  const CudaApi& c = cuda();
  d.out.reserve(4);
  auto once = [&] {
    if (d.noopKernel) {
      cudaCheck(c.cuLaunchKernel(d.noopKernel, 1, 1, 1, 32, 1, 1, 0, d.compute, nullptr, nullptr), "cuLaunchKernel");
    } else {
      cudaCheck(c.cudaMemsetAsync(d.out.ptr, 0, 4, d.compute), "cudaMemsetAsync");
    }
  };
  BenchResult res;
  res.samplesS = eventSamples(d, d.compute, it, once);
  // Host side: the cost of the launch call itself, and of a launch followed by a synchronisation.
  const int inner = std::max(1, it.inner);
  double t0 = nowS();
  for (int i = 0; i < inner; i++) once();
  res.extra.push_back({"hostLaunchS", (nowS() - t0) / inner});
  cudaCheck(c.cudaStreamSynchronize(d.compute), "cudaStreamSynchronize");
  t0 = nowS();
  for (int i = 0; i < 20; i++) {
    once();
    cudaCheck(c.cudaStreamSynchronize(d.compute), "cudaStreamSynchronize");
  }
  res.extra.push_back({"launchSyncS", (nowS() - t0) / 20});
  res.notes.push_back({"method", d.noopKernel ? "empty PTX kernel (cuLaunchKernel)" : "4-byte cudaMemsetAsync"});
  return res;
}

/** GEMMs on the compute stream; copy j on the copy stream after GEMM `after` (an event), like DDP bucket copies. */
BenchResult program(const BenchItem& it) {
  DeviceState& d = useDevice(it.device);
  const CudaApi& c = cuda();
  const GemmType t = gemmType(it.dtype);
  int64_t elems = 1, outElems = 1, copyBytes = 1;
  for (const auto& g : it.gemms) {
    elems = std::max({elems, g.m * g.k, g.k * g.n});
    outElems = std::max(outElems, g.m * g.n);
  }
  for (const auto& cp : it.copies) copyBytes = std::max(copyBytes, cp.bytes);
  prepareGemm(d, t, elems, outElems);
  void* ab = d.operands[t.operandKey].ptr;
  const int kind = it.direction == "h2d" ? kH2D : it.direction == "d2d" ? kD2D : kD2H;
  void* host = nullptr;
  cudaCheck(c.cudaMallocHost(&host, copyBytes), "cudaMallocHost");
  d.src.reserve(copyBytes);
  std::vector<cudaEvent> after(it.gemms.size());
  for (auto& e : after) cudaCheck(c.cudaEventCreate(&e), "cudaEventCreate");
  cudaEvent begin = nullptr, copiesDone = nullptr;
  cudaCheck(c.cudaEventCreate(&begin), "cudaEventCreate");
  cudaCheck(c.cudaEventCreate(&copiesDone), "cudaEventCreate");
  const bool doCompute = it.run != "copy", doCopy = it.run != "compute";
  auto once = [&] {
    // The copy stream starts with the compute stream (after the start event the caller recorded).
    cudaCheck(c.cudaEventRecord(begin, d.compute), "cudaEventRecord");
    cudaCheck(c.cudaStreamWaitEvent(d.copy, begin, 0), "cudaStreamWaitEvent");
    for (size_t i = 0; doCompute && i < it.gemms.size(); i++) {
      runGemm(d, t, it.gemms[i], ab, ab, d.out.ptr);
      cudaCheck(c.cudaEventRecord(after[i], d.compute), "cudaEventRecord");
    }
    for (const auto& cp : it.copies) {
      if (!doCopy) break;
      if (doCompute && cp.after >= 0) cudaCheck(c.cudaStreamWaitEvent(d.copy, after[cp.after], 0), "cudaStreamWaitEvent");
      void* to = kind == kD2H ? host : d.dst.ptr;
      const void* from = kind == kH2D ? host : d.src.ptr;
      cudaCheck(c.cudaMemcpyAsync(to, from, cp.bytes, kind, d.copy), "cudaMemcpyAsync");
    }
    cudaCheck(c.cudaEventRecord(copiesDone, d.copy), "cudaEventRecord");
    cudaCheck(c.cudaStreamWaitEvent(d.compute, copiesDone, 0), "cudaStreamWaitEvent");
  };
  d.dst.reserve(copyBytes);
  BenchResult res;
  res.samplesS = eventSamples(d, d.compute, it, once);
  for (auto& e : after) c.cudaEventDestroy(e);
  c.cudaEventDestroy(begin);
  c.cudaEventDestroy(copiesDone);
  c.cudaFreeHost(host);
  return res;
}

}  // namespace

BenchResult runCuda(const BenchItem& it) {
  if (it.kind == "gemm") return gemm(it);
  if (it.kind == "copy") return copy(it);
  if (it.kind == "launch") return launch(it);
  if (it.kind == "program") return program(it);
  if (it.kind == "collective") return runNccl(it);
  throw std::invalid_argument("unknown measurement kind '" + it.kind + "'");
}

}  // namespace csim
