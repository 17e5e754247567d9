// NCCL collectives over the first `ranks` visible GPUs from one process: one communicator per device
// (ncclCommInitAll), each call issued inside ncclGroupStart/End, timed with events on every device's stream; a
// sample is the slowest device's time. Sizes follow nccl-tests (the whole buffer for all-reduce, the gathered
// output for all-gather, the input for reduce-scatter; float32, sum).
#include <algorithm>
#include <map>
#include <stdexcept>
#include <vector>

#include "cuda_device.h"

namespace csim {

namespace {

// ncclFloat32, ncclSum
constexpr int kNcclFloat = 7, kNcclSum = 0;

std::map<int, std::vector<void*>> g_comms;

std::vector<void*>& comms(int ranks) {
  auto it = g_comms.find(ranks);
  if (it != g_comms.end()) return it->second;
  std::vector<int> devs(ranks);
  for (int i = 0; i < ranks; i++) {
    devs[i] = i;
    useDevice(i);  // streams and context first
  }
  std::vector<void*> c(ranks, nullptr);
  ncclCheck(cuda().ncclCommInitAll(c.data(), ranks, devs.data()), "ncclCommInitAll");
  return g_comms[ranks] = c;
}

}  // namespace

BenchResult runNccl(const BenchItem& it) {
  const CudaApi& c = cuda();
  if (!cudaHasNccl()) throw std::runtime_error("collectives need libnccl, which was not loaded");
  int count = 0;
  cudaCheck(c.cudaGetDeviceCount(&count), "cudaGetDeviceCount");
  if (it.ranks < 2 || it.ranks > count) {
    throw std::invalid_argument("collective: ranks must be between 2 and the " + std::to_string(count) + " visible GPUs");
  }
  const int n = it.ranks;
  const size_t elems = static_cast<size_t>(it.bytes / 4);
  if (elems < static_cast<size_t>(n)) throw std::invalid_argument("collective: bytes must be at least 4 × ranks");
  const size_t chunk = elems / n;
  std::vector<void*>& comm = comms(n);
  std::vector<DeviceState*> devs;
  for (int i = 0; i < n; i++) {
    DeviceState& d = useDevice(i);
    d.src.reserve(elems * 4);
    d.dst.reserve(elems * 4);
    cudaCheck(c.cudaMemsetAsync(d.src.ptr, 0, elems * 4, d.compute), "cudaMemsetAsync");
    devs.push_back(&d);
  }
  auto once = [&] {
    ncclCheck(c.ncclGroupStart(), "ncclGroupStart");
    for (int i = 0; i < n; i++) {
      DeviceState& d = *devs[i];
      int r = 0;
      if (it.op == "all_reduce") r = c.ncclAllReduce(d.src.ptr, d.dst.ptr, elems, kNcclFloat, kNcclSum, comm[i], d.compute);
      else if (it.op == "all_gather") r = c.ncclAllGather(d.src.ptr, d.dst.ptr, chunk, kNcclFloat, comm[i], d.compute);
      else if (it.op == "reduce_scatter")
        r = c.ncclReduceScatter(d.src.ptr, d.dst.ptr, chunk, kNcclFloat, kNcclSum, comm[i], d.compute);
      else throw std::invalid_argument("collective: unknown op '" + it.op + "'");
      ncclCheck(r, it.op.c_str());
    }
    ncclCheck(c.ncclGroupEnd(), "ncclGroupEnd");
  };
  auto syncAll = [&] {
    for (int i = 0; i < n; i++) {
      cudaCheck(c.cudaSetDevice(i), "cudaSetDevice");
      cudaCheck(c.cudaStreamSynchronize(devs[i]->compute), "cudaStreamSynchronize");
    }
  };
  const int inner = std::max(1, it.inner);
  for (int w = 0; w < it.warmup; w++) once();
  syncAll();
  BenchResult res;
  for (int rep = 0; rep < it.repeats; rep++) {
    for (int i = 0; i < n; i++) {
      cudaCheck(c.cudaSetDevice(i), "cudaSetDevice");
      cudaCheck(c.cudaEventRecord(devs[i]->start, devs[i]->compute), "cudaEventRecord");
    }
    for (int k = 0; k < inner; k++) once();
    for (int i = 0; i < n; i++) {
      cudaCheck(c.cudaSetDevice(i), "cudaSetDevice");
      cudaCheck(c.cudaEventRecord(devs[i]->stop, devs[i]->compute), "cudaEventRecord");
    }
    syncAll();
    double worst = 0;
    for (int i = 0; i < n; i++) worst = std::max(worst, elapsedS(devs[i]->start, devs[i]->stop));
    res.samplesS.push_back(worst / inner);
  }
  res.notes.push_back({"library", "nccl"});
  return res;
}

}  // namespace csim
