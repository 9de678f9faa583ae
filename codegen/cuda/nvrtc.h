// CUDA C -> PTX through NVRTC, loaded at run time (dlopen), so FuseLens builds
// and starts on machines without the CUDA toolkit; there the call says so.
#pragma once

#include <string>

#include "core/support/status.h"

namespace fuselens {

// Whether libnvrtc can be loaded ($CUDA_HOME/lib64, /usr/local/cuda/lib64, or
// the loader's path); `why` gets the reason when not.
bool nvrtcAvailable(std::string* why = nullptr);

// Compiles `source` for a virtual architecture such as "compute_90". A compile
// error returns NVRTC's first error with the generated source line it names.
Expected<std::string> compileToPtx(const std::string& source,
                                   const std::string& arch = "compute_90",
                                   const std::string& name = "fuselens.cu");

}  // namespace fuselens
