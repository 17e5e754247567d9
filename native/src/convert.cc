#include "convert.h"

#include <cmath>

namespace csim {

namespace {

double num(const Napi::Object& o, const char* key, double fallback) {
  if (!o.Has(key) || o.Get(key).IsUndefined()) return fallback;
  const Napi::Value v = o.Get(key);
  if (!v.IsNumber()) throw Napi::TypeError::New(o.Env(), std::string("item.") + key + " must be a number");
  const double d = v.As<Napi::Number>().DoubleValue();
  if (!std::isfinite(d)) throw Napi::TypeError::New(o.Env(), std::string("item.") + key + " must be finite");
  return d;
}

int64_t integer(const Napi::Object& o, const char* key, int64_t fallback) {
  const double d = num(o, key, static_cast<double>(fallback));
  if (d != std::floor(d)) throw Napi::TypeError::New(o.Env(), std::string("item.") + key + " must be a whole number");
  return static_cast<int64_t>(d);
}

std::string str(const Napi::Object& o, const char* key, const std::string& fallback) {
  if (!o.Has(key) || o.Get(key).IsUndefined()) return fallback;
  const Napi::Value v = o.Get(key);
  if (!v.IsString()) throw Napi::TypeError::New(o.Env(), std::string("item.") + key + " must be a string");
  return v.As<Napi::String>().Utf8Value();
}

GemmDims dims(const Napi::Object& o) { return {integer(o, "m", 0), integer(o, "n", 0), integer(o, "k", 0)}; }

Napi::Array arrayField(const Napi::Object& o, const char* key) {
  if (!o.Has(key) || o.Get(key).IsUndefined()) return Napi::Array::New(o.Env());
  if (!o.Get(key).IsArray()) throw Napi::TypeError::New(o.Env(), std::string("item.") + key + " must be an array");
  return o.Get(key).As<Napi::Array>();
}

}  // namespace

BenchItem itemFromJs(const Napi::Object& o) {
  BenchItem it;
  it.kind = str(o, "kind", "");
  it.dtype = str(o, "dtype", "fp32");
  it.gemm = dims(o);
  it.direction = str(o, "direction", "");
  it.pinned = !o.Has("pinned") || o.Get("pinned").ToBoolean().Value();
  it.bytes = integer(o, "bytes", 0);
  it.footprintBytes = integer(o, "footprintBytes", 0);
  it.op = str(o, "op", "");
  it.ranks = static_cast<int>(integer(o, "ranks", 1));
  const Napi::Array gemms = arrayField(o, "gemms");
  for (uint32_t i = 0; i < gemms.Length(); i++) it.gemms.push_back(dims(gemms.Get(i).As<Napi::Object>()));
  const Napi::Array copies = arrayField(o, "copies");
  for (uint32_t i = 0; i < copies.Length(); i++) {
    const Napi::Object c = copies.Get(i).As<Napi::Object>();
    const int after = static_cast<int>(integer(c, "after", -1));
    if (after >= static_cast<int>(it.gemms.size())) throw Napi::RangeError::New(o.Env(), "item.copies[].after names a GEMM that does not exist");
    it.copies.push_back({integer(c, "bytes", 0), after});
  }
  it.run = str(o, "run", "both");
  it.threads = static_cast<int>(integer(o, "threads", 1));
  it.clock = str(o, "clock", "wall");
  it.device = static_cast<int>(integer(o, "device", 0));
  it.warmup = static_cast<int>(integer(o, "warmup", 1));
  it.repeats = static_cast<int>(integer(o, "repeats", 5));
  it.inner = static_cast<int>(integer(o, "inner", 1));
  if (it.repeats < 1 || it.warmup < 0 || it.inner < 1) throw Napi::RangeError::New(o.Env(), "item: repeats and inner must be ≥ 1, warmup ≥ 0");
  return it;
}

Napi::Object resultToJs(Napi::Env env, const BenchResult& r) {
  Napi::Object o = Napi::Object::New(env);
  Napi::Array samples = Napi::Array::New(env, r.samplesS.size());
  for (size_t i = 0; i < r.samplesS.size(); i++) samples.Set(static_cast<uint32_t>(i), r.samplesS[i]);
  o.Set("samplesS", samples);
  Napi::Object extra = Napi::Object::New(env);
  for (const auto& kv : r.extra) extra.Set(kv.first, kv.second);
  o.Set("extra", extra);
  Napi::Object notes = Napi::Object::New(env);
  for (const auto& kv : r.notes) notes.Set(kv.first, kv.second);
  o.Set("notes", notes);
  return o;
}

std::vector<LibRequest> libRequestsFromJs(const Napi::Array& a) {
  std::vector<LibRequest> out;
  for (uint32_t i = 0; i < a.Length(); i++) {
    const Napi::Object o = a.Get(i).As<Napi::Object>();
    LibRequest req;
    req.name = str(o, "name", "");
    req.required = !o.Has("required") || o.Get("required").ToBoolean().Value();
    const Napi::Array paths = arrayField(o, "paths");
    for (uint32_t j = 0; j < paths.Length(); j++) req.paths.push_back(paths.Get(j).ToString().Utf8Value());
    out.push_back(req);
  }
  return out;
}

Napi::Array libOutcomesToJs(Napi::Env env, const std::vector<LibOutcome>& outcomes) {
  Napi::Array arr = Napi::Array::New(env, outcomes.size());
  for (size_t i = 0; i < outcomes.size(); i++) {
    const auto& o = outcomes[i];
    Napi::Object js = Napi::Object::New(env);
    js.Set("name", o.name);
    js.Set("required", o.required);
    if (!o.path.empty()) js.Set("path", o.path);
    if (!o.error.empty()) js.Set("error", o.error);
    Napi::Array tried = Napi::Array::New(env, o.tried.size());
    for (size_t j = 0; j < o.tried.size(); j++) {
      Napi::Object t = Napi::Object::New(env);
      t.Set("path", o.tried[j].first);
      t.Set("error", o.tried[j].second);
      tried.Set(static_cast<uint32_t>(j), t);
    }
    js.Set("tried", tried);
    arr.Set(static_cast<uint32_t>(i), js);
  }
  return arr;
}

}  // namespace csim
