// Control-flow drivers: If, Loop, Scan (see driver_kernel.h). The host decides
// which branch runs, how many iterations and which slices; every body is
// compiled with compileGraph (unfused, one kernel per op) for the types it
// meets (specialize.h) and run as compiled code. One file per op:
// driver_cf_if.cpp, driver_cf_loop.cpp, driver_cf_scan.cpp; shared pieces in
// driver_cf_common.cpp.
#include "codegen/driver/driver_cf.h"

namespace fuselens {

std::optional<Expected<DriverKernel>> lowerControlFlowDriver(const Graph& g, const Node& n,
                                                             const std::string&,
                                                             const CompileOptions& opts) {
  if (!n.domain.empty()) return std::nullopt;
  if (n.op == "If") return cfdriver::lowerIf(g, n, opts);
  if (n.op == "Loop") return cfdriver::lowerLoop(g, n, opts);
  if (n.op == "Scan") return cfdriver::lowerScan(g, n, opts);
  return std::nullopt;
}

}  // namespace fuselens
