// Dispatch to the driver families (see driver_kernel.h).
#include "codegen/driver/driver_kernel.h"

namespace fuselens {

std::optional<Expected<DriverKernel>> lowerDriverKernel(const Graph& g, const Node& n,
                                                        const std::string& name,
                                                        const CompileOptions& opts) {
  if (!opts.drivers) return std::nullopt;
  if (auto d = lowerControlFlowDriver(g, n, name, opts)) return d;
  return lowerDynamicShapeDriver(g, n, name, opts);
}

}  // namespace fuselens
