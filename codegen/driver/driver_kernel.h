// Driver kernels: nodes whose arithmetic is compiled but whose control is
// decided at run time, on the host: which If branch runs, how many Loop
// iterations, how many Scan steps, how large a NonZero or Range output is, and
// nodes whose input shapes are known only once the run reaches them. A driver
// is ordinary runtime code (like the thread pool), never the eager reference:
// every arithmetic step it takes runs code generated from the loop IR, compiled
// for the shapes it meets at run time and cached by them.
//
// Driver kernels are not the reference fallback (host_kernel.h): their tensors
// are codegen's work and compare counts them. export does not include them yet.
#pragma once

#include <optional>
#include <string>

#include "codegen/compiler.h"
#include "codegen/runtime/host_kernel.h"

namespace fuselens {

struct DriverKernel {
  HostKernelFn run;     // the node's present inputs -> its outputs
  std::string loopIr;   // what is compiled ahead of time, for the loop IR listing
  std::string summary;  // "If: both branches compiled (3 + 2 kernels)"
};

// nullopt: no driver handles n (the caller lowers it, or falls back).
// An error: a driver handles n's op but cannot compile this node.
std::optional<Expected<DriverKernel>> lowerDriverKernel(const Graph& g, const Node& n,
                                                        const std::string& name,
                                                        const CompileOptions& opts);

// The drivers, one per family (codegen/driver_*.cpp); the same contract.
std::optional<Expected<DriverKernel>> lowerControlFlowDriver(const Graph& g, const Node& n,
                                                             const std::string& name,
                                                             const CompileOptions& opts);
std::optional<Expected<DriverKernel>> lowerDynamicShapeDriver(const Graph& g, const Node& n,
                                                              const std::string& name,
                                                              const CompileOptions& opts);

}  // namespace fuselens
