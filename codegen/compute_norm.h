// Internal to lowering: per-channel normalizations (compute_norm.cpp).
#pragma once

#include "codegen/compute.h"

namespace fuselens {

// InstanceNormalization and GroupNormalization: reductions over (n, group) rows.
bool isNormOp(const std::string& op);
// Checks those and BatchNormalization (which inlines, see batchNormValue).
Status checkNormOp(const Graph& body, const Node& n);
std::vector<StmtRef> lowerGroupNorm(KernelBuilder& kb, const Node& n,
                                    const KernelBuilder::Sink& sink);
ExprRef batchNormValue(KernelBuilder& kb, const Node& n, const Index& out);

}  // namespace fuselens
