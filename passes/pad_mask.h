// pad-mask{dim=seq} (dim defaults to seq): prepares a graph whose symbolic dim `dim` will be padded
// (shape buckets: the dim bound to a bucket larger than the valid length, the
// inputs padded with zeros, the outputs sliced back). Runs on the graph while
// `dim` is still symbolic, before the dims are bound and before the pipeline.
//
// It adds the graph input `<dim>_keep`, f32[dim]: 1 at valid positions, 0 at
// padding, and masks the ops whose valid results would read padding:
//   Softmax over a `dim` axis        x -> x + (keep - 1) * 1e30 along it
//                                    (padded keys get probability 0 exactly)
//   ReduceSum over a `dim` axis      x -> x * keep
//   ReduceMean over a `dim` axis     -> ReduceSum(x * keep) / (sum(keep) * other reduced extents)
//   MatMul contracting over `dim`    A -> A * keep, unless A is a masked Softmax
//   LayerNorm normalizing over `dim` mean and variance of the valid positions
//                                    (sums of x*keep over sum(keep)), then scale/bias
//   AveragePool along `dim`,         pool(x*keep) / pool(keep), pads counted in both
//     count_include_pad=0            (stride 1, same padding, as for Conv below)
// Ops that work along other axes (elementwise, row-wise LayerNorm, projections)
// are left alone: padded rows compute padding, which the slice drops.
// Which axes are `dim` is found by binding it to two probe values (after
// constant folding, so Reshape targets computed from Shape count), since
// symbols do not survive every shape computation. Ops that mix positions
// along `dim` in a way no mask fixes (strided Conv or pooling over it, other
// reductions, Slice, Concat over it, an axis derived from it such as
// seq*heads, a LayerNorm whose Mean/InvStdDev outputs are used) are refused with a sentence naming
// the node: compile such models per shape instead. A graph without `dim` is left as it is, with a
// note. Must run before any pass that binds or folds `dim`.
#pragma once

#include <string>

#include "core/ir/tensor.h"
#include "passes/pass.h"

namespace fuselens {

class PadMaskPass : public Pass {
 public:
  explicit PadMaskPass(std::string dim) : dim_(std::move(dim)) {}
  std::string name() const override { return "pad-mask"; }
  PassResult run(Graph& g, PassContext& ctx) override;

 private:
  std::string dim_;
};

// The graph input the pass adds, and its tensor for `valid` positions of `size`.
std::string padMaskInputName(const std::string& dim);
TensorData padMaskKeep(int64_t valid, int64_t size);

}  // namespace fuselens
