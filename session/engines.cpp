#include "session/engines.h"

#include "codegen/cuda_runtime/cuda_executor.h"

namespace fuselens {

bool cudaEngineAvailable(std::string* why) { return cudaDeviceAvailable(why); }

}  // namespace fuselens
