// Symbolic kernels for a whole model: the table built from the model's kernel
// plans at sample values of a dim, and its use when a plan is compiled at
// another value (CompileOptions::symbolic). Kernels are matched across shapes
// by their identity (kernel name, node name and op), so a kernel stands in
// only for the same node of the same pipeline.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "codegen/kernel_plan.h"
#include "codegen/symbolic/symbolic_kernel.h"

namespace fuselens {

struct SymbolicKernels {
  std::map<std::string, SymbolicKernel> kernels;  // by identity
  std::map<std::string, std::string> refused;     // identity -> why, one sentence
  std::vector<int64_t> sampleValues;
  double seconds = 0;  // building the table (lowering the samples included by the caller)
};

std::string kernelIdentity(const Graph& g, const KernelInfo& info);

// The schedule symbolic kernels are lowered with, at the samples and at every
// length: the host's defaults, with nests that keep one shape across lengths
// (Schedule::shapeStable).
Schedule symbolicSchedule();

// The lengths a dim is sampled at: past the small lengths where lowering folds
// loops of extent 1, no multiple of 8 (a split's tail would vanish), mixed
// residues mod 2..16 so floors and tails are told apart.
const std::vector<int64_t>& symbolicSampleLengths();

// From the plans of one model at several values of its dim (graph and plan
// per sample; the same pipeline). Compiled code, fallbacks and drivers are
// left out: only loop-IR kernels generalize.
SymbolicKernels buildSymbolicKernels(
    const std::vector<std::pair<const Graph*, const KernelPlan*>>& samples);

// Replaces every kernel of `plan` that has a symbolic form by its instance at
// this shape. Counts go to stats (symbolic, verified).
void applySymbolicKernels(const SymbolicKernels& table, const Graph& g, KernelPlan& plan,
                          CompileStats& stats);

}  // namespace fuselens
