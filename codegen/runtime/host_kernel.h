// The labelled reference fallback: a node codegen cannot lower (control flow,
// RNNs, data-dependent ops, ...) runs as a *host kernel* between compiled
// kernels, through the op registry's eager kernel. Every tensor such a kernel
// produces is marked "not compiled (reference fallback)" (KernelInfo::fallback)
// so compare never counts it as agreement and export refuses the module.
// This is the one place codegen calls eager code, on purpose and by label; the
// compute definitions never do.
#pragma once

#include <functional>
#include <string>

#include "core/ir/graph.h"
#include "core/support/status.h"

namespace fuselens {

// Runs node n of g (a single op, or a fused group through its body) on its
// present inputs (in order; the executor's KernelInfo::inputs) and returns its
// outputs, checked against the graph's types: dtype always, shape where the
// graph knows it. Values whose shape is known only at run time (NonZero's
// output and what reads it) can flow through host kernels only.
using HostKernelFn =
    std::function<Expected<std::vector<TensorData>>(const std::vector<const TensorData*>& inputs)>;
HostKernelFn makeHostKernel(const Graph& g, const Node& n);

}  // namespace fuselens
