// The CUDA driver API, loaded at run time with dlopen("libcuda.so.1"): FuseLens
// links no CUDA library, so it starts, and every feature that needs no GPU
// works, on machines without a driver. Only the entry points the executor uses
// are resolved; the driver's handle types are opaque pointers here, so no CUDA
// header is needed and none leaks into headers that include this one (only
// cuda_executor.cpp does).
#pragma once

#include <cstddef>
#include <string>

namespace fuselens::cudadrv {

using Result = int;  // CUresult; 0 is CUDA_SUCCESS
using Device = int;
using DevicePtr = unsigned long long;
using Handle = void*;  // CUcontext, CUmodule, CUfunction, CUstream, CUevent

struct Api {
  Result (*init)(unsigned) = nullptr;
  Result (*deviceGetCount)(int*) = nullptr;
  Result (*deviceGet)(Device*, int) = nullptr;
  Result (*primaryCtxRetain)(Handle*, Device) = nullptr;
  Result (*primaryCtxRelease)(Device) = nullptr;
  Result (*ctxSetCurrent)(Handle) = nullptr;
  Result (*moduleLoadData)(Handle*, const void*) = nullptr;
  Result (*moduleGetFunction)(Handle*, Handle, const char*) = nullptr;
  Result (*moduleUnload)(Handle) = nullptr;
  Result (*memAlloc)(DevicePtr*, size_t) = nullptr;
  Result (*memFree)(DevicePtr) = nullptr;
  Result (*memcpyHtoD)(DevicePtr, const void*, size_t) = nullptr;
  Result (*memcpyDtoH)(void*, DevicePtr, size_t) = nullptr;
  Result (*memcpyDtoD)(DevicePtr, DevicePtr, size_t) = nullptr;
  Result (*launchKernel)(Handle, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                         unsigned, Handle, void**, void**) = nullptr;
  Result (*streamCreate)(Handle*, unsigned) = nullptr;
  Result (*streamSynchronize)(Handle) = nullptr;
  Result (*streamDestroy)(Handle) = nullptr;
  Result (*eventCreate)(Handle*, unsigned) = nullptr;
  Result (*eventRecord)(Handle, Handle) = nullptr;
  Result (*eventElapsedTime)(float*, Handle, Handle) = nullptr;
  Result (*eventDestroy)(Handle) = nullptr;
  Result (*getErrorString)(Result, const char**) = nullptr;
};

// The loaded API with cuInit done and at least one device, or nullptr with
// `why` set to one sentence ("no CUDA driver: libcuda.so.1 cannot be loaded",
// "no CUDA device: ..."). Loaded once per process.
const Api* driver(std::string* why);

// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)"-style text for a result.
std::string errorText(const Api& api, Result r);

}  // namespace fuselens::cudadrv
