// Opens libcudart, libcublasLt, libcublas, libnccl and libcuda with dlopen from the candidate paths JavaScript
// computed (LD_LIBRARY_PATH, the loader cache, /usr/local/cuda*/lib64, Python's site-packages/nvidia/*/lib), and
// resolves the symbols declared in cuda_api.h. Records which file each library came from and why others failed.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>

#include <mutex>
#include <stdexcept>
#include <string>

#include "cuda_api.h"

namespace csim {

namespace {

CudaApi g_api{};
bool g_ready = false;
bool g_nccl = false;
bool g_driver = false;
std::string g_failure = "the CUDA libraries have not been loaded (call cudaLoad first)";
std::mutex g_mu;

struct Sym {
  const char* lib;
  const char* name;
  void** slot;
};

#define SYM(lib, field, name) Sym{lib, name, reinterpret_cast<void**>(&g_api.field)}

const Sym kSymbols[] = {
    SYM("cudart", cudaGetDeviceCount, "cudaGetDeviceCount"),
    SYM("cudart", cudaSetDevice, "cudaSetDevice"),
    SYM("cudart", cudaFree, "cudaFree"),
    SYM("cudart", cudaMalloc, "cudaMalloc"),
    SYM("cudart", cudaMallocHost, "cudaMallocHost"),
    SYM("cudart", cudaFreeHost, "cudaFreeHost"),
    SYM("cudart", cudaMemcpy, "cudaMemcpy"),
    SYM("cudart", cudaMemcpyAsync, "cudaMemcpyAsync"),
    SYM("cudart", cudaMemsetAsync, "cudaMemsetAsync"),
    SYM("cudart", cudaStreamCreateWithFlags, "cudaStreamCreateWithFlags"),
    SYM("cudart", cudaStreamDestroy, "cudaStreamDestroy"),
    SYM("cudart", cudaStreamSynchronize, "cudaStreamSynchronize"),
    SYM("cudart", cudaStreamWaitEvent, "cudaStreamWaitEvent"),
    SYM("cudart", cudaEventCreate, "cudaEventCreate"),
    SYM("cudart", cudaEventRecord, "cudaEventRecord"),
    SYM("cudart", cudaEventSynchronize, "cudaEventSynchronize"),
    SYM("cudart", cudaEventElapsedTime, "cudaEventElapsedTime"),
    SYM("cudart", cudaEventDestroy, "cudaEventDestroy"),
    SYM("cudart", cudaDeviceSynchronize, "cudaDeviceSynchronize"),
    SYM("cudart", cudaGetErrorString, "cudaGetErrorString"),
    SYM("cudart", cudaRuntimeGetVersion, "cudaRuntimeGetVersion"),
    SYM("cudart", cudaDriverGetVersion, "cudaDriverGetVersion"),
    SYM("cudart", cudaDeviceGetAttribute, "cudaDeviceGetAttribute"),
    SYM("cudart", cudaMemGetInfo, "cudaMemGetInfo"),
    SYM("cuda", cuInit, "cuInit"),
    SYM("cuda", cuDeviceGet, "cuDeviceGet"),
    SYM("cuda", cuDeviceGetName, "cuDeviceGetName"),
    SYM("cuda", cuModuleLoadData, "cuModuleLoadData"),
    SYM("cuda", cuModuleGetFunction, "cuModuleGetFunction"),
    SYM("cuda", cuLaunchKernel, "cuLaunchKernel"),
    SYM("cublasLt", cublasLtGetVersion, "cublasLtGetVersion"),
    SYM("cublas", cublasCreate, "cublasCreate_v2"),
    SYM("cublas", cublasDestroy, "cublasDestroy_v2"),
    SYM("cublas", cublasSetStream, "cublasSetStream_v2"),
    SYM("cublas", cublasGetVersion, "cublasGetVersion_v2"),
    SYM("cublas", cublasGemmEx, "cublasGemmEx"),
    SYM("nccl", ncclGetVersion, "ncclGetVersion"),
    SYM("nccl", ncclCommInitAll, "ncclCommInitAll"),
    SYM("nccl", ncclCommDestroy, "ncclCommDestroy"),
    SYM("nccl", ncclAllReduce, "ncclAllReduce"),
    SYM("nccl", ncclAllGather, "ncclAllGather"),
    SYM("nccl", ncclReduceScatter, "ncclReduceScatter"),
    SYM("nccl", ncclGroupStart, "ncclGroupStart"),
    SYM("nccl", ncclGroupEnd, "ncclGroupEnd"),
    SYM("nccl", ncclGetErrorString, "ncclGetErrorString"),
};

/** The file a symbol was loaded from (for a bare soname, the loader chose the folder itself). */
std::string loadedPath(void* symbol, const std::string& fallback) {
  Dl_info info;
  if (symbol && dladdr(symbol, &info) != 0 && info.dli_fname && info.dli_fname[0]) return info.dli_fname;
  return fallback;
}

/** Tries each path; on success resolves the library's symbols (a missing one makes the library count as failed). */
LibOutcome openOne(const LibRequest& req) {
  LibOutcome out;
  out.name = req.name;
  out.required = req.required;
  for (const auto& path : req.paths) {
    dlerror();
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
      const char* e = dlerror();
      out.tried.push_back({path, e ? e : "dlopen failed"});
      continue;
    }
    std::string missing;
    void* any = nullptr;
    for (const auto& s : kSymbols) {
      if (req.name != s.lib) continue;
      dlerror();
      *s.slot = dlsym(h, s.name);
      if (!*s.slot) missing += (missing.empty() ? "" : ", ") + std::string(s.name);
      else if (!any) any = *s.slot;
    }
    const std::string file = loadedPath(any, path);
    if (!missing.empty()) {
      out.tried.push_back({file, "loaded, but it lacks " + missing + " (too old a version?)"});
      continue;
    }
    out.path = file;
    return out;
  }
  out.error = out.tried.empty() ? "no candidate path" : "not found or not loadable";
  return out;
}

}  // namespace

std::vector<LibOutcome> cudaLoad(const std::vector<LibRequest>& libs) {
  std::lock_guard<std::mutex> lock(g_mu);
  std::vector<LibOutcome> outcomes;
  bool ok = true;
  std::string failed;
  for (const auto& req : libs) {
    outcomes.push_back(openOne(req));
    const auto& o = outcomes.back();
    if (o.path.empty() && o.required) {
      ok = false;
      failed += (failed.empty() ? "" : ", ") + o.name;
    }
    if (o.name == "nccl") g_nccl = !o.path.empty();
    if (o.name == "cuda") g_driver = !o.path.empty();
  }
  g_ready = ok;
  g_failure = ok ? "" : "required CUDA libraries could not be loaded: " + failed;
  return outcomes;
}

const CudaApi& cuda() {
  if (!g_ready) throw std::runtime_error(g_failure);
  return g_api;
}

bool cudaHasNccl() { return g_ready && g_nccl; }
bool cudaHasDriver() { return g_ready && g_driver; }

void cudaCheck(int code, const char* what) {
  if (code == 0) return;
  const char* msg = g_api.cudaGetErrorString ? g_api.cudaGetErrorString(code) : "unknown error";
  throw std::runtime_error(std::string(what) + " failed: " + msg + " (CUDA error " + std::to_string(code) + ")");
}

void cublasCheck(int code, const char* what) {
  if (code == 0) return;
  throw std::runtime_error(std::string(what) + " failed: cuBLAS status " + std::to_string(code));
}

void ncclCheck(int code, const char* what) {
  if (code == 0) return;
  const char* msg = g_api.ncclGetErrorString ? g_api.ncclGetErrorString(code) : "unknown error";
  throw std::runtime_error(std::string(what) + " failed: " + msg + " (NCCL result " + std::to_string(code) + ")");
}

}  // namespace csim
