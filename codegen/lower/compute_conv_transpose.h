// Internal to lowering: ConvTranspose (compute_conv_transpose.cpp).
#pragma once

#include "codegen/lower/compute.h"

namespace fuselens {

std::vector<StmtRef> lowerConvTranspose(KernelBuilder& kb, const Node& n,
                                        const KernelBuilder::Sink& sink);

}  // namespace fuselens
