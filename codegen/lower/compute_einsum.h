// Internal to lowering: Einsum as a generic reduction nest (compute_einsum.cpp).
#pragma once

#include "codegen/lower/compute.h"

namespace fuselens {

std::vector<StmtRef> lowerEinsum(KernelBuilder& kb, const Node& n, const KernelBuilder::Sink& sink);
// MatMul as the contraction "...ij,...jk->...ik" (1-D operands promoted as
// numpy does): the path for integer operands, any compute type.
std::vector<StmtRef> lowerMatMulAsEinsum(KernelBuilder& kb, const Node& n,
                                         const KernelBuilder::Sink& sink);

}  // namespace fuselens
