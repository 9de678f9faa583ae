// Internal to lowering: Conv vectorized over output channels, the direct
// nest for rows too short to fill a vector along W (compute_conv_channels.cpp
// says why and how). compute_conv.cpp picks it.
#pragma once

#include <cstdint>
#include <functional>
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

// The CUDA schedule's convolution (compute_conv_gemm.cpp): a plain nest of
// one output per iteration, which the GPU emitter (codegen/cuda/cuda_conv.cpp)
// runs as an implicit GEMM. True for cudaSchedule(), the schedule named "cuda"
// (a Schedule field would rebuild every includer of codegen/compiler.h).
bool convAsGemmNest(const Schedule& s);

// One convolution as the GEMM nest sees it, whatever the tensors' layout: the
// callbacks map (batch, channel, positions) to the caller's own indexing.
struct ConvGemm {
  int64_t batch = 1, groups = 1;
  int64_t mg = 1, cg = 1;      // output and input channels per group
  std::vector<ConvAxis> axes;  // the spatial axes (window, stride, pads)
  // x at (n, input channel, input positions), unguarded: the nest clamps the
  // positions and drops the padding's reads with a select.
  std::function<ExprRef(ExprRef, ExprRef, const std::vector<ExprRef>&)> x;
  // w at (output channel, input channel within the group, taps).
  std::function<ExprRef(ExprRef, ExprRef, const std::vector<ExprRef>&)> w;
  // The stores of output (n, output channel, positions) from the accumulated
  // sum: the caller adds its bias and applies the sink (the fused epilogue).
  std::function<std::vector<StmtRef>(ExprRef, ExprRef, const std::vector<ExprRef>&, ExprRef)> out;
};

//   for n, g, m, o.. (the first loop parallel):   // one output per iteration
//     let acc = 0
//     for c < cg, k.. < taps: acc = fma(x(n, g*cg + c, pos(o, k)), w(g*mg + m, c, k), acc)
//     out(n, g*mg + m, o.., acc)
// Loops of extent 1 are left out (their counter is 0).
std::vector<StmtRef> lowerConvGemmNest(KernelBuilder& kb, const ConvGemm& c);

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
