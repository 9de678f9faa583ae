// The device binaries an export ships beside its .cu and .ptx, from the
// toolkit's own tools run as child processes (toolkit.h):
//   <name>.sm_80.cubin, <name>.sm_90.cubin  ptxas's ELF for each architecture
//   <name>.fatbin                           fatbinary: those cubins plus the PTX,
//                                           so cuModuleLoadData picks the cubin
//                                           of the device at hand and a newer
//                                           device JIT-compiles the PTX
// and the SASS of a cubin (`compile --emit sass`) through cuobjdump or
// nvdisasm when the toolkit has one.
#pragma once

#include <map>
#include <string>

#include "core/support/status.h"

namespace fuselens {

// A fat binary of `cubins` (by "sm_80"-style architecture) and `ptx` compiled
// for virtual architecture `ptxArch` ("compute_80"). An error sentence names
// the missing fatbinary or its first error line.
Expected<std::string> makeFatbin(const std::map<std::string, std::string>& cubins,
                                 const std::string& ptx, const std::string& ptxArch);

// The SASS listing of `cubin` (cuobjdump -sass, else nvdisasm). Without either
// tool: one sentence saying so and where they were looked for.
Expected<std::string> disassembleCubin(const std::string& cubin);

}  // namespace fuselens
