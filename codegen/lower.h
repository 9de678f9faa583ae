// Lowering: one kernel of the optimized graph (a fused group, or one compute
// op) becomes one LoopFunc whose params are the kernel's inputs then outputs,
// in the node's order. Reshape and Identity outside groups need no kernel (the
// executor aliases their buffers): `isAliasNode` says which nodes get none.
#pragma once

#include <string>

#include "codegen/loop_ir.h"
#include "core/ir/graph.h"
#include "core/support/status.h"

namespace fuselens {

bool isAliasNode(const Node& n);  // top-level Reshape / Identity

// Lowers node `n` of `g`. The LoopFunc's params skip omitted (invalid) inputs.
Expected<LoopFunc> lowerKernel(const Graph& g, const Node& n, const std::string& name);

}  // namespace fuselens
