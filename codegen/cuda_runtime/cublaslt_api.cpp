#include "codegen/cuda_runtime/cublaslt_api.h"

#include <dlfcn.h>

#include <mutex>
#include <type_traits>

namespace fuselens::cublaslt {
namespace {

struct Loaded {
  Api api;
  std::string error;
};

const Loaded& loaded() {
  static Loaded l;
  static std::once_flag once;
  std::call_once(once, [] {
    void* lib = nullptr;
    for (const char* name : {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"})
      if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
    if (!lib) {
      l.error =
          "no cuBLASLt: libcublasLt.so.13 cannot be loaded (install the CUDA toolkit's cuBLAS "
          "or put its lib64 on LD_LIBRARY_PATH)";
      return;
    }
    auto sym = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
      if (!fn && l.error.empty()) l.error = std::string("no usable cuBLASLt: it lacks ") + name;
    };
    Api& a = l.api;
    sym(a.create, "cublasLtCreate");
    sym(a.destroy, "cublasLtDestroy");
    sym(a.descCreate, "cublasLtMatmulDescCreate");
    sym(a.descSetAttribute, "cublasLtMatmulDescSetAttribute");
    sym(a.descDestroy, "cublasLtMatmulDescDestroy");
    sym(a.layoutCreate, "cublasLtMatrixLayoutCreate");
    sym(a.layoutSetAttribute, "cublasLtMatrixLayoutSetAttribute");
    sym(a.layoutDestroy, "cublasLtMatrixLayoutDestroy");
    sym(a.prefCreate, "cublasLtMatmulPreferenceCreate");
    sym(a.prefSetAttribute, "cublasLtMatmulPreferenceSetAttribute");
    sym(a.prefDestroy, "cublasLtMatmulPreferenceDestroy");
    sym(a.getHeuristic, "cublasLtMatmulAlgoGetHeuristic");
    sym(a.matmul, "cublasLtMatmul");
  });
  return l;
}

}  // namespace

const Api* library(std::string* why) {
  const Loaded& l = loaded();
  if (why) *why = l.error;
  return l.error.empty() ? &l.api : nullptr;
}

}  // namespace fuselens::cublaslt
