// Conv for the GPU: the plain nest of one output per iteration
// (compute_conv_channels.h shows it). The CPU nests of compute_conv.cpp and
// compute_layout.cpp tile along W into per-thread accumulator arrays, which a
// GPU thread would hold in local memory and which hide the GEMM inside the
// convolution; this nest keeps its three index spaces apart (output channels
// read only by w, output pixels only by x, the reduction by both), so the CUDA
// emitter recognizes it and stages weight and input-patch tiles through shared
// memory (codegen/cuda/cuda_conv.cpp).
#include <utility>

#include "codegen/lower/compute_conv_channels.h"

namespace fuselens {
namespace {

// a * stride + b, leaving out what is 0.
ExprRef scaled(ExprRef a, int64_t stride, ExprRef b, bool aZero, bool bZero) {
  if (aZero) return b;
  ExprRef s = stride == 1 ? std::move(a) : mul(std::move(a), intConst(stride));
  return bZero ? s : add(std::move(s), std::move(b));
}

}  // namespace

bool convAsGemmNest(const Schedule& s) { return s.name == "cuda"; }

std::vector<StmtRef> lowerConvGemmNest(KernelBuilder& kb, const ConvGemm& c) {
  std::vector<std::pair<Var, int64_t>> loops;  // output loops, outermost first
  auto loopVar = [&](int64_t extent) -> ExprRef {
    if (extent == 1) return intConst(0);
    Var v = kb.newLoopVar();
    loops.emplace_back(v, extent);
    return varRef(v);
  };
  ExprRef n = loopVar(c.batch), g = loopVar(c.groups), m = loopVar(c.mg);
  std::vector<ExprRef> o;
  for (const ConvAxis& a : c.axes) o.push_back(loopVar(a.out));
  ReductionLoops red(kb);
  ExprRef ic = red.var(c.cg);
  std::vector<ExprRef> taps;
  for (const ConvAxis& a : c.axes) taps.push_back(red.var(a.k));
  ExprRef oc = scaled(g, c.mg, m, c.groups == 1, c.mg == 1);
  ExprRef ch = scaled(g, c.cg, ic, c.groups == 1, c.cg == 1);
  // Input positions; only an axis whose windows reach its padding is guarded.
  ExprRef inside;
  std::vector<ExprRef> pos;
  for (size_t i = 0; i < c.axes.size(); ++i) {
    const ConvAxis& a = c.axes[i];
    ExprRef p = a.s == 1 ? o[i] : mul(o[i], intConst(a.s));
    if (a.pb > 0) p = sub(p, intConst(a.pb));
    if (a.k > 1) p = add(p, mul(taps[i], intConst(a.d)));
    const bool lo = a.pb > 0, hi = (a.out - 1) * a.s - a.pb + (a.k - 1) * a.d >= a.in;
    if (lo) inside = andCond(inside, compare(CmpOp::GE, p, intConst(0)));
    if (hi) inside = andCond(inside, compare(CmpOp::LT, p, intConst(a.in)));
    if (lo || hi) p = binary(BinOp::Max, intConst(0), binary(BinOp::Min, p, intConst(a.in - 1)));
    pos.push_back(p);
  }
  ExprRef xv = c.x(n, ch, pos);
  if (inside) xv = select(inside, xv, floatConst(0));
  Var acc = kb.newLocal("conv_acc");  // the name cuda_conv.cpp recognizes
  std::vector<StmtRef> body = {let(acc, floatConst(0))};
  for (StmtRef& s : red.wrap({assign(acc, fma(xv, c.w(oc, ic, taps), varRef(acc)))}))
    body.push_back(std::move(s));
  for (StmtRef& s : c.out(n, oc, o, varRef(acc))) body.push_back(std::move(s));
  for (size_t i = loops.size(); i-- > 0;)
    body = {pinnedLoop(loops[i].first, loops[i].second,
                       i == 0 ? ForKind::Parallel : ForKind::Serial, std::move(body))};
  return body;
}

}  // namespace fuselens
