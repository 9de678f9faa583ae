// Internal to lowering: ConvTranspose (compute_conv_transpose.cpp), and its
// tiled form for a kernel equal to the stride (compute_conv_transpose_taps.cpp).
#pragma once

#include <optional>

#include "codegen/lower/compute.h"

namespace fuselens {

// What the tiled form needs of a ConvTranspose whose geometry was checked.
struct StrideTapsShape {
  std::vector<int64_t> x;        // input shape [N, Cin, spatial...]
  std::vector<int64_t> strides;  // per spatial dim
  int64_t cout = 0, group = 1;
  // Every spatial axis has kernel == stride, dilation 1, no padding and an
  // output of input * stride: each output position has exactly one tap.
  bool nonOverlapping = false;
};

// The tiled nest when the shape, the weight (an f32 constant) and the schedule
// allow it; nullopt to take the general nest.
std::optional<std::vector<StmtRef>> lowerConvTransposeByTaps(KernelBuilder& kb, const Node& n,
                                                             const StrideTapsShape& shape,
                                                             const KernelBuilder::Sink& sink);

std::vector<StmtRef> lowerConvTranspose(KernelBuilder& kb, const Node& n,
                                        const KernelBuilder::Sink& sink);

}  // namespace fuselens
