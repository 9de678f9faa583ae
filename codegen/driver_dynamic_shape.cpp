// Dynamic-shape drivers: NonZero, Range and nodes whose input shapes are known
// only at run time (see driver_kernel.h).
#include "codegen/driver_kernel.h"

namespace fuselens {

std::optional<Expected<DriverKernel>> lowerDynamicShapeDriver(const Graph&, const Node&,
                                                              const std::string&,
                                                              const CompileOptions&) {
  return std::nullopt;
}

}  // namespace fuselens
