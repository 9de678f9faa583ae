// Which engines this machine can run, for the faces: the CLI checks it before
// compiling for --engine cuda, the GUI's Pipeline > Engine menu says why the
// CUDA item cannot run here. Both print the same sentence. And the device
// code only the toolkit's tools make (SASS).
#pragma once

#include <string>

#include "core/support/status.h"

namespace fuselens {

// Whether the CUDA driver loads and has a device; otherwise false with `why`
// set to one sentence ("no CUDA driver: libcuda.so.1 cannot be loaded").
bool cudaEngineAvailable(std::string* why = nullptr);

// The SASS of `ptx` assembled by ptxas for `sm` ("sm_90"), listed by cuobjdump
// or nvdisasm (`compile --emit sass`); a sentence when a tool is missing.
Expected<std::string> sassForPtx(const std::string& ptx, const std::string& sm);

}  // namespace fuselens
