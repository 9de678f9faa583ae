#include "codegen/cuda_runtime/cuda_driver.h"

#include <dlfcn.h>

#include <mutex>
#include <type_traits>

namespace fuselens::cudadrv {
namespace {

struct Loaded {
  Api api;
  std::string error;
};

const Loaded& loaded() {
  static Loaded l;
  static std::once_flag once;
  std::call_once(once, [] {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      l.error = "no CUDA driver: libcuda.so.1 cannot be loaded (install the NVIDIA driver)";
      return;
    }
    // Versioned names first: the unversioned ones keep old ABIs for old binaries.
    auto sym = [&](auto& fn, const char* name, const char* v2 = nullptr) {
      void* p = v2 ? dlsym(lib, v2) : nullptr;
      if (!p) p = dlsym(lib, name);
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
      if (!fn && l.error.empty()) l.error = std::string("no usable CUDA driver: it lacks ") + name;
    };
    Api& a = l.api;
    sym(a.init, "cuInit");
    sym(a.deviceGetCount, "cuDeviceGetCount");
    sym(a.deviceGet, "cuDeviceGet");
    sym(a.primaryCtxRetain, "cuDevicePrimaryCtxRetain");
    sym(a.primaryCtxRelease, "cuDevicePrimaryCtxRelease", "cuDevicePrimaryCtxRelease_v2");
    sym(a.ctxSetCurrent, "cuCtxSetCurrent");
    sym(a.moduleLoadData, "cuModuleLoadData");
    sym(a.moduleGetFunction, "cuModuleGetFunction");
    sym(a.moduleUnload, "cuModuleUnload");
    sym(a.memAlloc, "cuMemAlloc_v2");
    sym(a.memFree, "cuMemFree_v2");
    sym(a.memcpyHtoD, "cuMemcpyHtoD_v2");
    sym(a.memcpyDtoH, "cuMemcpyDtoH_v2");
    sym(a.memcpyDtoD, "cuMemcpyDtoD_v2");
    sym(a.launchKernel, "cuLaunchKernel");
    sym(a.streamCreate, "cuStreamCreate");
    sym(a.streamSynchronize, "cuStreamSynchronize");
    sym(a.streamDestroy, "cuStreamDestroy_v2");
    sym(a.eventCreate, "cuEventCreate");
    sym(a.eventRecord, "cuEventRecord");
    sym(a.eventElapsedTime, "cuEventElapsedTime", "cuEventElapsedTime_v2");
    sym(a.eventDestroy, "cuEventDestroy_v2");
    sym(a.getErrorString, "cuGetErrorString");
    if (!l.error.empty()) return;
    if (Result r = a.init(0); r != 0) {
      l.error = "no CUDA device: the driver does not start (cuInit: " + errorText(a, r) + ")";
      return;
    }
    int count = 0;
    if (Result r = a.deviceGetCount(&count); r != 0 || count == 0)
      l.error = "no CUDA device: the driver lists none";
  });
  return l;
}

}  // namespace

const Api* driver(std::string* why) {
  const Loaded& l = loaded();
  if (why) *why = l.error;
  return l.error.empty() ? &l.api : nullptr;
}

std::string errorText(const Api& api, Result r) {
  const char* s = nullptr;
  if (api.getErrorString && api.getErrorString(r, &s) == 0 && s)
    return std::string(s) + " (" + std::to_string(r) + ")";
  return "CUDA error " + std::to_string(r);
}

}  // namespace fuselens::cudadrv
