// Internal to lowering: ScatterND and ScatterElements (compute_scatter.cpp).
#pragma once

#include "codegen/lower/compute.h"

namespace fuselens {

bool isScatterOp(const std::string& op);
Status checkScatterOp(const Graph& body, const Node& n);
std::vector<StmtRef> lowerScatter(KernelBuilder& kb, const Node& n,
                                  const KernelBuilder::Sink& sink);

}  // namespace fuselens
