// The clustersim native addon: CPU and CUDA microbenchmarks for calibration (DESIGN.md §8). Every measurement runs
// in an AsyncWorker on libuv's thread pool and resolves a Promise, so the main thread stays free to draw progress.
// The CUDA libraries are not linked: cudaLoad() opens them with dlopen from paths JavaScript chose.
#include <napi.h>
#include <unistd.h>

#include <fstream>
#include <mutex>
#include <string>
#include <thread>

#include "convert.h"
#include "cpu_gemm.h"
#include "cuda_device.h"

namespace csim {

namespace {

/** One measurement at a time: two at once would disturb each other's timing. */
std::mutex g_run;

class BenchWorker : public Napi::AsyncWorker {
 public:
  BenchWorker(Napi::Env env, BenchItem item, bool gpu)
      : Napi::AsyncWorker(env), deferred_(Napi::Promise::Deferred::New(env)), item_(std::move(item)), gpu_(gpu) {}

  Napi::Promise promise() { return deferred_.Promise(); }

  void Execute() override {
    try {
      std::lock_guard<std::mutex> lock(g_run);
      result_ = gpu_ ? runCuda(item_) : runCpu(item_);
    } catch (const std::exception& e) {
      SetError(e.what());
    }
  }

  void OnOK() override { deferred_.Resolve(resultToJs(Env(), result_)); }
  void OnError(const Napi::Error& e) override { deferred_.Reject(e.Value()); }

 private:
  Napi::Promise::Deferred deferred_;
  BenchItem item_;
  bool gpu_;
  BenchResult result_;
};

Napi::Value startWorker(const Napi::CallbackInfo& info, bool gpu) {
  if (info.Length() < 1 || !info[0].IsObject()) throw Napi::TypeError::New(info.Env(), "expected a measurement item object");
  auto* worker = new BenchWorker(info.Env(), itemFromJs(info[0].As<Napi::Object>()), gpu);
  Napi::Promise p = worker->promise();
  worker->Queue();
  return p;
}

Napi::Value RunCpu(const Napi::CallbackInfo& info) { return startWorker(info, false); }
Napi::Value RunCuda(const Napi::CallbackInfo& info) { return startWorker(info, true); }

std::string cpuModel() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "unknown";
}

double sysconfOr0(int name) {
  const long v = sysconf(name);
  return v > 0 ? static_cast<double>(v) : 0.0;
}

Napi::Value CpuInfo(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object o = Napi::Object::New(env);
  o.Set("model", cpuModel());
  o.Set("logicalCores", static_cast<double>(std::thread::hardware_concurrency()));
#ifdef _SC_LEVEL2_CACHE_SIZE
  o.Set("l2Bytes", sysconfOr0(_SC_LEVEL2_CACHE_SIZE));
  o.Set("l3Bytes", sysconfOr0(_SC_LEVEL3_CACHE_SIZE));
#endif
  o.Set("memoryBytes", sysconfOr0(_SC_PHYS_PAGES) * sysconfOr0(_SC_PAGESIZE));
  o.Set("gemmIsa", sgemmIsa());
  Napi::Object tile = Napi::Object::New(env);
  tile.Set("m", kTileM);
  tile.Set("n", kTileN);
  o.Set("gemmTile", tile);
  return o;
}

/** Correctness checks of the CPU kernels on small data (used by the tests), synchronous. */
Napi::Value CpuCheck(const Napi::CallbackInfo& info) {
  const Napi::Object o = info[0].As<Napi::Object>();
  const std::string what = o.Get("what").ToString().Utf8Value();
  const auto num = [&](const char* k) { return static_cast<int64_t>(o.Get(k).ToNumber().DoubleValue()); };
  try {
    if (what == "gemm") return Napi::Number::New(info.Env(), sgemmCheck(static_cast<int>(num("threads")), num("m"), num("n"), num("k")));
    return Napi::Number::New(info.Env(), cpuCollectiveCheck(what, static_cast<int>(num("ranks")), num("floats")));
  } catch (const std::exception& e) {
    throw Napi::Error::New(info.Env(), e.what());
  }
}

Napi::Value CudaLoad(const Napi::CallbackInfo& info) {
  if (info.Length() < 1 || !info[0].IsArray()) throw Napi::TypeError::New(info.Env(), "expected an array of library requests");
  return libOutcomesToJs(info.Env(), cudaLoad(libRequestsFromJs(info[0].As<Napi::Array>())));
}

Napi::Value CudaDescribe(const Napi::CallbackInfo& info) {
  std::lock_guard<std::mutex> lock(g_run);
  Napi::Object o = Napi::Object::New(info.Env());
  try {
    for (const auto& kv : cudaDescribe()) o.Set(kv.first, kv.second);
  } catch (const std::exception& e) {
    throw Napi::Error::New(info.Env(), e.what());
  }
  return o;
}

}  // namespace

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("abiVersion", Napi::Number::New(env, 1));
  exports.Set("cpuInfo", Napi::Function::New(env, CpuInfo));
  exports.Set("runCpu", Napi::Function::New(env, RunCpu));
  exports.Set("cpuCheck", Napi::Function::New(env, CpuCheck));
  exports.Set("cudaLoad", Napi::Function::New(env, CudaLoad));
  exports.Set("cudaDescribe", Napi::Function::New(env, CudaDescribe));
  exports.Set("runCuda", Napi::Function::New(env, RunCuda));
  return exports;
}

}  // namespace csim

static Napi::Object InitAddon(Napi::Env env, Napi::Object exports) { return csim::Init(env, exports); }

NODE_API_MODULE(clustersim_native, InitAddon)
