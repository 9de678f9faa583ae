// Internal to lowering: per-channel normalizations (compute_norm.cpp).
#pragma once

#include "codegen/lower/compute.h"

namespace fuselens {

// InstanceNormalization and GroupNormalization: reductions over (n, group) rows.
bool isNormOp(const std::string& op);
// BatchNormalization with training_mode=1: a reduction over N and the spatial
// axes per channel (the inference form inlines instead, see batchNormValue).
bool isBatchNormTraining(const Node& n);
// Checks those and BatchNormalization (which inlines, see batchNormValue).
Status checkNormOp(const Graph& body, const Node& n);
// Group and instance norm, and BatchNormalization in training mode.
std::vector<StmtRef> lowerGroupNorm(KernelBuilder& kb, const Node& n,
                                    const KernelBuilder::Sink& sink);
ExprRef batchNormValue(KernelBuilder& kb, const Node& n, const Index& out);

}  // namespace fuselens
