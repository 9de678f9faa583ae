// Which engines this machine can run, for the faces: the CLI checks it before
// compiling for --engine cuda, the GUI's Pipeline > Engine menu says why the
// CUDA item cannot run here. Both print the same sentence.
#pragma once

#include <string>

namespace fuselens {

// Whether the CUDA driver loads and has a device; otherwise false with `why`
// set to one sentence ("no CUDA driver: libcuda.so.1 cannot be loaded").
bool cudaEngineAvailable(std::string* why = nullptr);

}  // namespace fuselens
