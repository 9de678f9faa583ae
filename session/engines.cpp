#include "session/engines.h"

#include "codegen/cuda/device_binaries.h"
#include "codegen/cuda/ptxas.h"
#include "codegen/cuda_runtime/cuda_executor.h"

namespace fuselens {

bool cudaEngineAvailable(std::string* why) { return cudaDeviceAvailable(why); }

Expected<std::string> sassForPtx(const std::string& ptx, const std::string& sm) {
  auto assembled = runPtxas(ptx, sm);
  if (!assembled) return assembled.status();
  return disassembleCubin(assembled->cubin);
}

}  // namespace fuselens
