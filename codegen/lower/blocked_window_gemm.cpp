// The GPU's nest of a blocked conv (compute_conv_gemm.cpp): one output per
// iteration, which the CUDA conv stage tiles through shared memory. Channel c
// of the blocked tensors is block c / b, lane c % b; depthwise is one group
// per channel.
#include <utility>

#include "codegen/lower/blocked_window.h"
#include "codegen/lower/compute_conv_channels.h"

namespace fuselens::blocked {

std::vector<StmtRef> BlockedWindow::gemmNest(const KernelBuilder::Sink& sink) {
  Axis h = h_, w = w_;
  if (transposed_) std::swap(h, w);
  ConvGemm c;
  c.batch = y_[0];
  if (depthwise_)
    c.groups = y_[1] * b_;
  else
    c.mg = y_[1] * b_, c.cg = cg_;
  for (const Axis& a : {h, w}) c.axes.push_back({a.in, a.out, a.k, a.s, a.d, a.p});
  c.x = [&](ExprRef nb, ExprRef ch, const std::vector<ExprRef>& pos) {
    return kb_.valueAt(n_.inputs[0],
                       Index::ofDims(x_, {nb, divI(ch, b_), pos[0], pos[1], modI(ch, b_)}));
  };
  c.w = [&](ExprRef oc, ExprRef ic, const std::vector<ExprRef>& t) {
    return kb_.valueAt(n_.inputs[1],
                       Index::ofDims(w_shape_, {divI(oc, b_), ic, t[0], t[1], modI(oc, b_)}));
  };
  c.out = [&](ExprRef nb, ExprRef oc, const std::vector<ExprRef>& o, ExprRef acc) {
    if (hasBias_)
      acc = add(
          acc, kb_.valueAt(n_.inputs[2], Index::ofDims({y_[1], b_}, {divI(oc, b_), modI(oc, b_)})));
    return sink(Index::ofDims(y_, {nb, divI(oc, b_), o[0], o[1], modI(oc, b_)}), acc);
  };
  return lowerConvGemmNest(kb_, c);
}

}  // namespace fuselens::blocked
