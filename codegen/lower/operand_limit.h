// The most operands one generated kernel reads. A variadic op may have up to
// 2^31-1 inputs (Sum, Max, Min, Mean, Concat), but a kernel over 50,000
// operands is one basic block of 100,000 loads and adds that LLVM's optimizer
// takes many minutes over. Lowering refuses a node past the limit, so the
// compiler runs it on its eager kernel (the labelled reference fallback),
// which is linear in the input count. fuse-ops' max-inputs keeps fused groups
// far below this; only a lone wide node reaches it.
#pragma once

#include <string>

#include "core/ir/graph.h"
#include "core/support/status.h"

namespace fuselens {

inline constexpr size_t kMaxKernelOperands = 256;

inline Status checkOperandCount(const Node& n, const std::string& where) {
  if (n.inputs.size() <= kMaxKernelOperands) return Status::ok();
  return Status::error(n.op + " has " + std::to_string(n.inputs.size()) +
                           " inputs, more than the " + std::to_string(kMaxKernelOperands) +
                           " one generated kernel reads",
                       where);
}

}  // namespace fuselens
