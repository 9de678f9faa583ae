// Control-flow drivers: If, Loop, Scan (see driver_kernel.h).
#include "codegen/driver_kernel.h"

namespace fuselens {

std::optional<Expected<DriverKernel>> lowerControlFlowDriver(const Graph&, const Node&,
                                                             const std::string&,
                                                             const CompileOptions&) {
  return std::nullopt;
}

}  // namespace fuselens
