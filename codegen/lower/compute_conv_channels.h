// Internal to lowering: Conv vectorized over output channels, the direct
// nest for rows too short to fill a vector along W (compute_conv_channels.cpp
// says why and how). compute_conv.cpp picks it.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "codegen/lower/compute.h"

namespace fuselens {

// a && b for guard conditions, either of which may be absent (null: true).
ExprRef andCond(ExprRef a, ExprRef b);

// The serial reduction loops of a window nest (input channel, kernel axes):
// var(extent) names one (the constant 0 when the extent is 1), wrap nests a
// body inside all of them, the first named outermost.
class ReductionLoops {
 public:
  explicit ReductionLoops(KernelBuilder& kb) : kb_(kb) {}
  ExprRef var(int64_t extent);
  std::vector<StmtRef> wrap(std::vector<StmtRef> body) const;

 private:
  KernelBuilder& kb_;
  std::vector<std::pair<Var, int64_t>> loops_;
};

// One spatial axis of a window: input and output size, kernel, stride,
// dilation and leading pad (the trailing pad only changes the output size).
struct ConvAxis {
  int64_t in = 1, out = 1, k = 1, s = 1, d = 1, pb = 0;
};

// Whether a Conv of output shape y (group 1, constant weights) is better
// served by channel vectors: its rows are shorter than a vector and it has
// at least half a vector of output channels.
bool channelTilesFit(const std::vector<int64_t>& y);

// The nest for x * w -> y (NC + spatial dims, group 1, weights constant).
std::vector<StmtRef> lowerConvChannelTiled(KernelBuilder& kb, const Node& n,
                                           const std::vector<int64_t>& x,
                                           const std::vector<int64_t>& w,
                                           const std::vector<int64_t>& y,
                                           const std::vector<ConvAxis>& axes, bool hasBias,
                                           const KernelBuilder::Sink& sink);

}  // namespace fuselens
