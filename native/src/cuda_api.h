// The few CUDA runtime, driver, cuBLAS and NCCL entry points the CUDA backend calls, declared here so that the
// addon needs no CUDA headers or libraries to build: the libraries are opened with dlopen at run time.
// Handles are opaque pointers; enums are ints (their values are documented where they are used).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace csim {

using cudaStream = void*;
using cudaEvent = void*;

struct CudaApi {
  // libcudart (cudaError_t is an int; 0 is success)
  int (*cudaGetDeviceCount)(int*);
  int (*cudaSetDevice)(int);
  int (*cudaFree)(void*);
  int (*cudaMalloc)(void**, size_t);
  int (*cudaMallocHost)(void**, size_t);
  int (*cudaFreeHost)(void*);
  int (*cudaMemcpy)(void*, const void*, size_t, int);
  int (*cudaMemcpyAsync)(void*, const void*, size_t, int, cudaStream);
  int (*cudaMemsetAsync)(void*, int, size_t, cudaStream);
  int (*cudaStreamCreateWithFlags)(cudaStream*, unsigned);
  int (*cudaStreamDestroy)(cudaStream);
  int (*cudaStreamSynchronize)(cudaStream);
  int (*cudaStreamWaitEvent)(cudaStream, cudaEvent, unsigned);
  int (*cudaEventCreate)(cudaEvent*);
  int (*cudaEventRecord)(cudaEvent, cudaStream);
  int (*cudaEventSynchronize)(cudaEvent);
  int (*cudaEventElapsedTime)(float*, cudaEvent, cudaEvent);
  int (*cudaEventDestroy)(cudaEvent);
  int (*cudaDeviceSynchronize)();
  const char* (*cudaGetErrorString)(int);
  int (*cudaRuntimeGetVersion)(int*);
  int (*cudaDriverGetVersion)(int*);
  int (*cudaDeviceGetAttribute)(int*, int, int);
  int (*cudaMemGetInfo)(size_t*, size_t*);
  // libcuda (driver API; CUresult is an int). Optional: used for device names and an empty PTX kernel.
  int (*cuInit)(unsigned);
  int (*cuDeviceGet)(int*, int);
  int (*cuDeviceGetName)(char*, int, int);
  int (*cuModuleLoadData)(void**, const void*);
  int (*cuModuleGetFunction)(void**, void*, const char*);
  int (*cuLaunchKernel)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, cudaStream, void**,
                        void**);
  // libcublas (cublasStatus_t is an int)
  int (*cublasCreate)(void**);
  int (*cublasDestroy)(void*);
  int (*cublasSetStream)(void*, cudaStream);
  int (*cublasGetVersion)(void*, int*);
  int (*cublasGemmEx)(void*, int, int, int, int, int, const void*, const void*, int, int, const void*, int, int,
                      const void*, void*, int, int, int, int);
  // libcublasLt
  size_t (*cublasLtGetVersion)();
  // libnccl (ncclResult_t is an int). Optional: only collectives need it.
  int (*ncclGetVersion)(int*);
  int (*ncclCommInitAll)(void**, int, const int*);
  int (*ncclCommDestroy)(void*);
  int (*ncclAllReduce)(const void*, void*, size_t, int, int, void*, cudaStream);
  int (*ncclAllGather)(const void*, void*, size_t, int, void*, cudaStream);
  int (*ncclReduceScatter)(const void*, void*, size_t, int, int, void*, cudaStream);
  int (*ncclGroupStart)();
  int (*ncclGroupEnd)();
  const char* (*ncclGetErrorString)(int);
};

/** One library to open: its short name, the paths to try in order, and whether the backend can run without it. */
struct LibRequest {
  std::string name;
  std::vector<std::string> paths;
  bool required = true;
};

/** What happened to one library: the file it came from (empty if none) and every failed attempt. */
struct LibOutcome {
  std::string name;
  std::string path;
  std::string error;
  bool required = true;
  std::vector<std::pair<std::string, std::string>> tried;
};

/** Opens the libraries and resolves every symbol; the API is usable when all required ones loaded. */
std::vector<LibOutcome> cudaLoad(const std::vector<LibRequest>& libs);
/** The resolved API, or throws with the reason the load failed (or that it was never attempted). */
const CudaApi& cuda();
bool cudaHasNccl();
bool cudaHasDriver();

/** Throws std::runtime_error naming the call and CUDA's message when `code` is not success. */
void cudaCheck(int code, const char* what);
void cublasCheck(int code, const char* what);
void ncclCheck(int code, const char* what);

}  // namespace csim
