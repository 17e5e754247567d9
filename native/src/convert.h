// Conversions between JavaScript objects and the C++ measurement structs.
#pragma once

#include <napi.h>

#include "cuda_api.h"
#include "item.h"

namespace csim {

/** Reads a measurement request; throws Napi::TypeError naming the field when one is malformed. */
BenchItem itemFromJs(const Napi::Object& o);
Napi::Object resultToJs(Napi::Env env, const BenchResult& r);
/** Reads [{ name, paths: string[], required }]. */
std::vector<LibRequest> libRequestsFromJs(const Napi::Array& a);
Napi::Array libOutcomesToJs(Napi::Env env, const std::vector<LibOutcome>& outcomes);

}  // namespace csim
