// Per-GPU state (streams, events, cuBLAS handle, the empty PTX kernel) and the machine description.
#include <stdexcept>

#include "cuda_device.h"

namespace csim {

namespace {

// cudaStreamNonBlocking
constexpr unsigned kNonBlocking = 1;
// cudaDevAttrMultiProcessorCount, cudaDevAttrComputeCapabilityMajor / Minor
constexpr int kAttrSms = 16, kAttrCcMajor = 75, kAttrCcMinor = 76;

/** An empty kernel in PTX: the driver JIT-compiles it for whatever GPU is there (no nvcc at build time). */
const char* kNoopPtx =
    ".version 6.0\n.target sm_50\n.address_size 64\n.visible .entry csim_noop()\n{\n  ret;\n}\n";

std::map<int, DeviceState> g_devices;

}  // namespace

bool DeviceBuffer::reserve(size_t need) {
  if (need <= bytes && ptr) return false;
  if (ptr) cuda().cudaFree(ptr);
  ptr = nullptr;
  bytes = 0;
  cudaCheck(cuda().cudaMalloc(&ptr, need), "cudaMalloc");
  bytes = need;
  return true;
}

DeviceState& useDevice(int index) {
  const CudaApi& c = cuda();
  int count = 0;
  cudaCheck(c.cudaGetDeviceCount(&count), "cudaGetDeviceCount");
  if (index < 0 || index >= count) throw std::invalid_argument("device " + std::to_string(index) + " does not exist");
  cudaCheck(c.cudaSetDevice(index), "cudaSetDevice");
  // Binds the device's primary context to this thread (libuv may run each measurement on another thread, and
  // before CUDA 12 cudaSetDevice alone does not), which the driver-API kernel launch needs.
  cudaCheck(c.cudaFree(nullptr), "cudaFree(0) (context)");
  auto it = g_devices.find(index);
  if (it != g_devices.end()) return it->second;
  if (!c.cublasCreate) throw std::runtime_error("libcublas is not loaded, so no GPU work can run");
  DeviceState& d = g_devices[index];
  d.index = index;
  cudaCheck(c.cudaStreamCreateWithFlags(&d.compute, kNonBlocking), "cudaStreamCreateWithFlags");
  cudaCheck(c.cudaStreamCreateWithFlags(&d.copy, kNonBlocking), "cudaStreamCreateWithFlags");
  cudaCheck(c.cudaEventCreate(&d.start), "cudaEventCreate");
  cudaCheck(c.cudaEventCreate(&d.stop), "cudaEventCreate");
  cublasCheck(c.cublasCreate(&d.blas), "cublasCreate");
  cublasCheck(c.cublasSetStream(d.blas, d.compute), "cublasSetStream");
  void* module = nullptr;
  if (cudaHasDriver() && c.cuInit(0) == 0 && c.cuModuleLoadData(&module, kNoopPtx) == 0) {
    if (c.cuModuleGetFunction(&d.noopKernel, module, "csim_noop") != 0) d.noopKernel = nullptr;
  }
  return d;
}

double elapsedS(cudaEvent a, cudaEvent b) {
  float ms = 0;
  cudaCheck(cuda().cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime");
  return ms * 1e-3;
}

std::vector<std::pair<std::string, std::string>> cudaDescribe() {
  const CudaApi& c = cuda();
  std::vector<std::pair<std::string, std::string>> out;
  int v = 0, count = 0;
  if (c.cudaDriverGetVersion(&v) == 0) out.push_back({"driverVersion", std::to_string(v)});
  if (c.cudaRuntimeGetVersion(&v) == 0) out.push_back({"runtimeVersion", std::to_string(v)});
  if (c.cublasLtGetVersion) out.push_back({"cublasLtVersion", std::to_string(c.cublasLtGetVersion())});
  if (cudaHasNccl() && c.ncclGetVersion(&v) == 0) out.push_back({"ncclVersion", std::to_string(v)});
  cudaCheck(c.cudaGetDeviceCount(&count), "cudaGetDeviceCount");
  out.push_back({"deviceCount", std::to_string(count)});
  for (int i = 0; i < count; i++) {
    DeviceState& d = useDevice(i);
    const std::string p = "device." + std::to_string(i) + ".";
    if (i == 0 && c.cublasGetVersion(d.blas, &v) == 0) out.push_back({"cublasVersion", std::to_string(v)});
    char name[256] = "unknown";
    int dev = 0;
    if (cudaHasDriver() && c.cuDeviceGet(&dev, i) == 0) c.cuDeviceGetName(name, sizeof name, dev);
    size_t freeB = 0, totalB = 0;
    c.cudaMemGetInfo(&freeB, &totalB);
    int sms = 0, ccMajor = 0, ccMinor = 0;
    c.cudaDeviceGetAttribute(&sms, kAttrSms, i);
    c.cudaDeviceGetAttribute(&ccMajor, kAttrCcMajor, i);
    c.cudaDeviceGetAttribute(&ccMinor, kAttrCcMinor, i);
    out.push_back({p + "name", name});
    out.push_back({p + "memoryBytes", std::to_string(totalB)});
    out.push_back({p + "smCount", std::to_string(sms)});
    out.push_back({p + "computeCapability", std::to_string(ccMajor) + "." + std::to_string(ccMinor)});
    out.push_back({p + "launchKernel", d.noopKernel ? "ptx" : "memset"});
  }
  return out;
}

}  // namespace csim
