#include "codegen/cuda_runtime/cublaslt_api.h"

#include <dlfcn.h>

#include <utility>

namespace fuselens::cublaslt {
namespace {

struct Loaded {
  Api api;
  std::string error;
};

// The first soname that loads, its entry points resolved; the first failure
// becomes the one sentence library() gives.
Loaded load() {
  Loaded l;
  void* lib = nullptr;
  for (const char* name : {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"})
    if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
  if (!lib) {
    l.error =
        "no cuBLASLt: libcublasLt.so.13 cannot be loaded (install the CUDA toolkit's cuBLAS "
        "or put its lib64 on LD_LIBRARY_PATH)";
    return l;
  }
  const std::pair<void**, const char*> entries[] = {
      {reinterpret_cast<void**>(&l.api.create), "cublasLtCreate"},
      {reinterpret_cast<void**>(&l.api.destroy), "cublasLtDestroy"},
      {reinterpret_cast<void**>(&l.api.descCreate), "cublasLtMatmulDescCreate"},
      {reinterpret_cast<void**>(&l.api.descSetAttribute), "cublasLtMatmulDescSetAttribute"},
      {reinterpret_cast<void**>(&l.api.descDestroy), "cublasLtMatmulDescDestroy"},
      {reinterpret_cast<void**>(&l.api.layoutCreate), "cublasLtMatrixLayoutCreate"},
      {reinterpret_cast<void**>(&l.api.layoutSetAttribute), "cublasLtMatrixLayoutSetAttribute"},
      {reinterpret_cast<void**>(&l.api.layoutDestroy), "cublasLtMatrixLayoutDestroy"},
      {reinterpret_cast<void**>(&l.api.prefCreate), "cublasLtMatmulPreferenceCreate"},
      {reinterpret_cast<void**>(&l.api.prefSetAttribute), "cublasLtMatmulPreferenceSetAttribute"},
      {reinterpret_cast<void**>(&l.api.prefDestroy), "cublasLtMatmulPreferenceDestroy"},
      {reinterpret_cast<void**>(&l.api.getHeuristic), "cublasLtMatmulAlgoGetHeuristic"},
      {reinterpret_cast<void**>(&l.api.matmul), "cublasLtMatmul"}};
  for (const auto& [slot, name] : entries)
    if (!(*slot = dlsym(lib, name)) && l.error.empty())
      l.error = std::string("no usable cuBLASLt: it lacks ") + name;
  return l;
}

const Loaded& loaded() {
  static const Loaded l = load();  // once per process, thread-safe
  return l;
}

}  // namespace

const Api* library(std::string* why) {
  const Loaded& l = loaded();
  if (why) *why = l.error;
  return l.error.empty() ? &l.api : nullptr;
}

}  // namespace fuselens::cublaslt
