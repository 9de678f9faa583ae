// Compute definitions of Conv (NCHW with any number of spatial dims: groups,
// strides, pads, dilations, auto_pad, optional bias) and of the windowed pools
// MaxPool (the Y output only) and AveragePool (count_include_pad, ceil_mode).
//
// A direct convolution: one loop over N * C_out (the schedule makes it
// parallel when the nest has enough work), loops over the outer spatial dims,
// and per output row a tile of the innermost spatial dim (W) kept in a local
// accumulator vector:
//
//   for nm < N * C_out: for oh:                     // parallel over nm
//     for each W tile [ow0, ow0 + T):
//       float acc[T] = 0;                           // vectorized
//       for c < C_in/groups, kh < KH, kw < KW:
//         for j < T:                                // vectorized
//           acc[j] += x[n, g*Cg + c, ih(oh,kh), iw(ow0+j,kw)] * w[m, c, kh, kw];
//       for j < T: y[n, m, oh, ow0 + j] = epilogue(acc[j] + b[m]);   // vectorized
//
// where a position outside the input (padding) reads 0 (Conv), -inf (MaxPool)
// or is left out of the average; its index is clamped so the read stays in
// bounds and a select drops it. Axes that never leave the input need no guard.
// The pools are the same nest without the channel loop. A conv whose rows are
// shorter than a vector runs vectorized over output channels instead
// (compute_conv_channels.cpp). Geometry (auto_pad,
// ceil_mode) is resolved here from the attributes and checked against the
// output shape the node declares.
#include <algorithm>
#include <cmath>

#include "codegen/lower/compute.h"
#include "codegen/lower/compute_conv_channels.h"

namespace fuselens {
namespace {

struct Axis {
  int64_t in = 1, out = 1, k = 1, s = 1, d = 1, pb = 0, pe = 0;
  // The lowest and highest input positions any window reads.
  int64_t lowest() const { return -pb; }
  int64_t highest() const { return (out - 1) * s - pb + (k - 1) * d; }
  bool guardLo() const { return lowest() < 0; }
  bool guardHi() const { return highest() >= in; }
};

std::vector<int64_t> intsAttr(const Node& n, const char* name, size_t count, int64_t fill) {
  auto v = n.attrs.getInts(name);
  return v ? *v : std::vector<int64_t>(count, fill);
}

// The spatial axes of x -> y for a window op with kernel `kernel`; false (and
// kb failed) when the attributes are malformed or disagree with y's shape.
bool resolveAxes(KernelBuilder& kb, const Node& n, const std::vector<int64_t>& x,
                 const std::vector<int64_t>& y, const std::vector<int64_t>& kernel, bool pool,
                 std::vector<Axis>& axes) {
  size_t r = x.size() - 2;
  auto s = intsAttr(n, "strides", r, 1), d = intsAttr(n, "dilations", r, 1),
       p = intsAttr(n, "pads", 2 * r, 0);
  if (s.size() != r || d.size() != r || p.size() != 2 * r || kernel.size() != r) {
    kb.fail(Status::error("strides, dilations, pads or the kernel do not match " +
                              std::to_string(r) + " spatial dims",
                          nodePlace(n)));
    return false;
  }
  bool ceilMode = pool && n.attrs.getInt("ceil_mode", 0) != 0;
  std::string autoPad = n.attrs.getString("auto_pad", "NOTSET");
  axes.assign(r, Axis{});
  for (size_t i = 0; i < r; ++i) {
    Axis& a = axes[i];
    a.in = x[2 + i], a.out = y[2 + i], a.k = kernel[i], a.s = s[i], a.d = d[i];
    a.pb = p[i], a.pe = p[i + r];
    if (a.s <= 0 || a.d <= 0 || a.k <= 0 || a.pb < 0 || a.pe < 0) {
      kb.fail(Status::error("strides, dilations and kernel must be positive, pads non-negative",
                            nodePlace(n)));
      return false;
    }
    int64_t dk = (a.k - 1) * a.d + 1, expected = 0;
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      // Pools size SAME padding with the undilated kernel (as ONNX Runtime does).
      int64_t same = (a.in + a.s - 1) / a.s;
      int64_t total = std::max<int64_t>(0, (same - 1) * a.s + (pool ? a.k : dk) - a.in);
      a.pb = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      a.pe = total - a.pb;
      expected = pool ? (a.in + total - dk) / a.s + 1 : same;
    } else {
      if (autoPad == "VALID") {
        a.pb = a.pe = 0;
      } else if (autoPad != "NOTSET") {
        kb.fail(Status::error("auto_pad '" + autoPad +
                                  "' is not one of NOTSET, SAME_UPPER, "
                                  "SAME_LOWER, VALID",
                              nodePlace(n)));
        return false;
      }
      int64_t span = a.in + a.pb + a.pe - dk;
      expected = span < 0 ? 0 : (ceilMode ? (span + a.s - 1) / a.s : span / a.s) + 1;
      if (ceilMode && expected > 0 && (expected - 1) * a.s >= a.in + a.pb) --expected;
    }
    if (expected != a.out || a.out <= 0) {
      kb.fail(Status::error("output shape " + formatShape(y) + " disagrees with the window " +
                                "geometry (spatial dim " + std::to_string(i) + " should be " +
                                std::to_string(expected) + ")",
                            nodePlace(n)));
      return false;
    }
  }
  return true;
}

// Clamps an index into [0, hi].
ExprRef clampTo(ExprRef i, int64_t hi) {
  return binary(BinOp::Max, intConst(0), binary(BinOp::Min, std::move(i), intConst(hi)));
}

enum class WindowOp { Conv, Max, Avg };

// The shared nest of Conv and the windowed pools.
class WindowNest {
 public:
  WindowNest(KernelBuilder& kb, const Node& n, WindowOp op, std::vector<int64_t> x,
             std::vector<int64_t> y, std::vector<Axis> axes)
      : kb_(kb), n_(n), op_(op), x_(std::move(x)), y_(std::move(y)), axes_(std::move(axes)) {}

  // Conv only: the weight shape and the group count.
  void setConv(std::vector<int64_t> w, int64_t groups, bool hasBias) {
    w_ = std::move(w);
    groups_ = groups;
    hasBias_ = hasBias;
  }
  void setIncludePad(bool b) { includePad_ = b; }

  std::vector<StmtRef> build(const KernelBuilder::Sink& sink) {
    sink_ = &sink;
    int64_t ow = y_.back();
    int64_t tile = ow <= 64 ? ow : 32;
    int64_t full = ow / tile, tail = ow - full * tile;
    // One loop over N * C_out (the parallel one when the nest has enough work),
    // then the outer spatial dims.
    int64_t nm = y_[0] * y_[1];
    Var nmVar = kb_.newLoopVar();
    ExprRef nmRef = nm == 1 ? intConst(0) : varRef(nmVar);
    ExprRef nIdx = y_[0] == 1 ? intConst(0) : binary(BinOp::Div, nmRef, intConst(y_[1]));
    ExprRef mIdx = y_[1] == 1   ? intConst(0)
                   : y_[0] == 1 ? nmRef
                                : binary(BinOp::Mod, nmRef, intConst(y_[1]));
    std::vector<int64_t> spatialOuter(y_.begin() + 2, y_.end() - 1);
    std::vector<StmtRef> body =
        kb_.loopNest(spatialOuter, [&](const Index& at) -> std::vector<StmtRef> {
          std::vector<ExprRef> od = {nIdx, mIdx};
          for (const ExprRef& e : at.dimExprs()) od.push_back(e);
          std::vector<StmtRef> b;
          if (full == 1) {
            for (StmtRef& s : tileNest(od, intConst(0), tile)) b.push_back(std::move(s));
          } else if (full > 1) {
            Var t = kb_.newLoopVar();
            b.push_back(forLoop(t, full, tileNest(od, mul(varRef(t), intConst(tile)), tile)));
          }
          if (tail > 0)
            for (StmtRef& s : tileNest(od, intConst(full * tile), tail)) b.push_back(std::move(s));
          return b;
        });
    if (nm == 1) return body;
    return {forLoop(nmVar, nm, body)};
  }

 private:
  // One tile of `width` outputs starting at W position ow0 of output row od.
  std::vector<StmtRef> tileNest(const std::vector<ExprRef>& od, ExprRef ow0, int64_t width) {
    LoopFunc& fn = kb_.func();
    size_t r = axes_.size();
    auto local = [&](const char* name) {
      return fn.addBuffer(name + std::to_string(fn.buffers.size()), BufferKind::Local, DType::F32,
                          {width});
    };
    BufferId accId = local("acc");
    double fill = op_ == WindowOp::Max ? -INFINITY : 0.0;
    // Does the average need a per-position count?
    bool anyGuard = false, anyPadHi = false;
    for (const Axis& a : axes_) {
      anyGuard = anyGuard || a.guardLo() || a.guardHi();
      anyPadHi = anyPadHi || a.highest() >= a.in + a.pe;
    }
    bool counted = op_ == WindowOp::Avg && (includePad_ ? anyPadHi : anyGuard);
    std::optional<BufferId> cntId;
    if (counted) cntId = local("cnt");
    const Buffer& acc = fn.buffer(accId);

    std::vector<StmtRef> out;
    Var j0 = kb_.newLoopVar();
    std::vector<StmtRef> init = {store(acc, varRef(j0), floatConst(fill))};
    if (cntId) init.push_back(store(fn.buffer(*cntId), varRef(j0), floatConst(0)));
    out.push_back(pinnedLoop(j0, width, ForKind::Vectorized, init));

    // Reduction loops: the input channel (Conv), then one per kernel axis.
    std::vector<std::pair<Var, int64_t>> loops;
    ExprRef c = intConst(0);
    int64_t cg = op_ == WindowOp::Conv ? w_[1] : 1;
    if (cg > 1) {
      Var v = kb_.newLoopVar();
      loops.emplace_back(v, cg);
      c = varRef(v);
    }
    std::vector<ExprRef> kk(r);
    for (size_t i = 0; i < r; ++i) {
      if (axes_[i].k == 1) {
        kk[i] = intConst(0);
        continue;
      }
      Var v = kb_.newLoopVar();
      loops.emplace_back(v, axes_[i].k);
      kk[i] = varRef(v);
    }
    Var j = kb_.newLoopVar();
    ExprRef jr = varRef(j);
    // Input position per spatial axis, its guard, and the padded-window guard.
    std::vector<ExprRef> xi(x_.size());
    xi[0] = od[0];
    ExprRef inside, inPadded;
    for (size_t i = 0; i < r; ++i) {
      const Axis& a = axes_[i];
      ExprRef o = i + 1 == r ? add(ow0, jr) : od[2 + i];
      ExprRef pos = add(sub(mul(o, intConst(a.s)), intConst(a.pb)), mul(kk[i], intConst(a.d)));
      ExprRef ok;
      if (a.guardLo()) ok = compare(CmpOp::GE, pos, intConst(0));
      if (a.guardHi()) ok = andCond(ok, compare(CmpOp::LT, pos, intConst(a.in)));
      if (a.highest() >= a.in + a.pe)
        inPadded = andCond(inPadded, compare(CmpOp::LT, pos, intConst(a.in + a.pe)));
      xi[2 + i] = ok ? clampTo(pos, a.in - 1) : pos;
      inside = andCond(inside, ok);
    }
    ExprRef wv;
    if (op_ == WindowOp::Conv) {
      int64_t mg = y_[1] / groups_;
      xi[1] = groups_ == 1 ? c : add(mul(binary(BinOp::Div, od[1], intConst(mg)), intConst(cg)), c);
      std::vector<ExprRef> wi = {od[1], c};
      for (size_t i = 0; i < r; ++i) wi.push_back(kk[i]);
      wv = kb_.valueAt(n_.inputs[1], Index::ofDims(w_, wi));
    } else {
      xi[1] = od[1];
    }
    ExprRef xv = kb_.valueAt(n_.inputs[0], Index::ofDims(x_, xi));
    if (inside) xv = select(inside, xv, floatConst(fill));
    ExprRef cur = load(acc, jr);
    ExprRef next;
    if (op_ == WindowOp::Conv)
      next = fma(xv, wv, cur);
    else if (op_ == WindowOp::Max)
      next = binary(BinOp::Max, cur, xv);
    else
      next = add(cur, xv);
    std::vector<StmtRef> step = {store(acc, jr, next)};
    if (cntId) {
      ExprRef cond = includePad_ ? inPadded : inside;
      ExprRef one = cond ? select(cond, floatConst(1), floatConst(0)) : floatConst(1);
      const Buffer& cnt = fn.buffer(*cntId);
      step.push_back(store(cnt, jr, add(load(cnt, jr), one)));
    }
    std::vector<StmtRef> red = {pinnedLoop(j, width, ForKind::Vectorized, step)};
    for (size_t i = loops.size(); i-- > 0;)
      red = {pinnedLoop(loops[i].first, loops[i].second, ForKind::Serial, red)};
    for (StmtRef& s : red) out.push_back(std::move(s));

    // The results, through the sink (a fused epilogue applies there).
    Var j2 = kb_.newLoopVar();
    ExprRef jf = varRef(j2);
    ExprRef v = load(acc, jf);
    if (op_ == WindowOp::Conv && hasBias_)
      v = add(v, kb_.valueAt(n_.inputs[2], Index::ofDims({y_[1]}, {od[1]})));
    if (op_ == WindowOp::Avg) {
      if (cntId) {
        v = div(v, binary(BinOp::Max, load(fn.buffer(*cntId), jf), floatConst(1)));
      } else {
        int64_t count = 1;
        for (const Axis& a : axes_) count *= a.k;
        v = mul(v, floatConst(1.0 / double(count)));
      }
    }
    std::vector<ExprRef> yi(od.begin(), od.end());
    yi.push_back(add(ow0, jf));
    out.push_back(pinnedLoop(j2, width, ForKind::Vectorized, (*sink_)(Index::ofDims(y_, yi), v)));
    StmtRef all = seq(std::move(out));
    if (cntId) all = allocate(fn.buffer(*cntId), {all});
    return {allocate(fn.buffer(accId), {all})};
  }

  KernelBuilder& kb_;
  const Node& n_;
  WindowOp op_;
  std::vector<int64_t> x_, y_, w_;
  std::vector<Axis> axes_;
  int64_t groups_ = 1;
  bool hasBias_ = false;
  bool includePad_ = false;
  const KernelBuilder::Sink* sink_ = nullptr;
};

// MaxPool with its Indices output: per output element a scan of the window
// keeping the first maximum and its flat input position: ((n*C + c)*H + h)*W + w
// with storage_order 0, column-major over the spatial dims ((n*C + c)*W + w)*H + h
// with 1. Written plainly: the tiled nest above keeps no positions.
// (storage_order changes only Indices, so Y alone takes the tiled nest.)
std::vector<StmtRef> maxPoolWithIndices(KernelBuilder& kb, const Node& n,
                                        const std::vector<int64_t>& x,
                                        const std::vector<int64_t>& y,
                                        const std::vector<Axis>& axes,
                                        const KernelBuilder::Sink& sink) {
  return kb.loopNest(y, [&](const Index& at) -> std::vector<StmtRef> {
    std::vector<ExprRef> od = at.dimExprs();
    std::vector<ExprRef> xi = {od[0], od[1]};
    std::vector<std::pair<Var, int64_t>> loops;
    ExprRef inside;
    for (size_t i = 0; i < axes.size(); ++i) {
      const Axis& a = axes[i];
      Var k = kb.newLoopVar();
      loops.emplace_back(k, a.k);
      ExprRef pos =
          add(sub(mul(od[2 + i], intConst(a.s)), intConst(a.pb)), mul(varRef(k), intConst(a.d)));
      inside = andCond(inside, andCond(compare(CmpOp::GE, pos, intConst(0)),
                                       compare(CmpOp::LT, pos, intConst(a.in))));
      xi.push_back(clampTo(pos, a.in - 1));
    }
    Index src = Index::ofDims(x, xi);
    ExprRef flat = src.flatExpr();
    if (n.attrs.getInt("storage_order", 0) != 0) {  // spatial dims reversed
      std::vector<int64_t> cm = {x[0], x[1]};
      std::vector<ExprRef> ci = {xi[0], xi[1]};
      for (size_t i = x.size(); i-- > 2;) {
        cm.push_back(x[i]);
        ci.push_back(xi[i]);
      }
      flat = Index::ofDims(cm, ci).flatExpr();
    }
    Var best = kb.newLocal("best"), at0 = kb.newLocal("pos", DType::I64);
    Var v = kb.newLocal("v");
    ExprRef take = select(inside, compare(CmpOp::GT, varRef(v), varRef(best)), inside);
    std::vector<StmtRef> inner = {let(v, kb.valueAt(n.inputs[0], src)),
                                  assign(at0, select(take, flat, varRef(at0))),
                                  assign(best, select(take, varRef(v), varRef(best)))};
    for (size_t i = loops.size(); i-- > 0;)
      inner = {pinnedLoop(loops[i].first, loops[i].second, ForKind::Serial, inner)};
    std::vector<StmtRef> body = {let(best, floatConst(-INFINITY)), let(at0, intConst(0))};
    body.insert(body.end(), inner.begin(), inner.end());
    for (StmtRef& s : sink(at, varRef(best))) body.push_back(std::move(s));
    for (StmtRef& s : kb.storeOutput(n.outputs[1], at, varRef(at0))) body.push_back(std::move(s));
    return body;
  });
}

bool checkNC(KernelBuilder& kb, const Node& n, const std::vector<int64_t>& x,
             const std::vector<int64_t>& y) {
  if (x.size() < 3 || y.size() != x.size()) {
    kb.fail(Status::error("expects [N, C, spatial...] input and output of one rank, got " +
                              formatShape(x) + " and " + formatShape(y),
                          nodePlace(n)));
    return false;
  }
  if (y[0] != x[0]) {
    kb.fail(Status::error("the batch dims of input and output differ", nodePlace(n)));
    return false;
  }
  return true;
}

}  // namespace

std::vector<StmtRef> lowerConv(KernelBuilder& kb, const Node& n, const KernelBuilder::Sink& sink) {
  std::vector<int64_t> x = kb.shapeOf(n.inputs[0]), w = kb.shapeOf(n.inputs[1]);
  std::vector<int64_t> y = kb.shapeOf(n.outputs[0]);
  if (!checkNC(kb, n, x, y)) return {};
  int64_t groups = n.attrs.getInt("group", 1);
  if (w.size() != x.size() || groups <= 0 || x[1] % groups != 0 || w[1] * groups != x[1] ||
      w[0] % groups != 0 || w[0] != y[1]) {
    kb.fail(Status::error("weight " + formatShape(w) + " does not fit input " + formatShape(x) +
                              " with group " + std::to_string(groups) + " and output " +
                              formatShape(y),
                          nodePlace(n)));
    return {};
  }
  std::vector<int64_t> kernel(w.begin() + 2, w.end());
  if (auto ks = n.attrs.getInts("kernel_shape"); ks && *ks != kernel) {
    kb.fail(Status::error("kernel_shape differs from the weight's spatial dims", nodePlace(n)));
    return {};
  }
  bool hasBias = n.inputs.size() > 2 && n.inputs[2].valid();
  if (hasBias && kb.shapeOf(n.inputs[2]) != std::vector<int64_t>{y[1]}) {
    kb.fail(Status::error("bias must have shape [" + std::to_string(y[1]) + "]", nodePlace(n)));
    return {};
  }
  std::vector<Axis> axes;
  if (!resolveAxes(kb, n, x, y, kernel, false, axes)) return {};
  if (convAsGemmNest(kb.schedule())) {
    ConvGemm c;
    c.batch = y[0], c.groups = groups, c.mg = y[1] / groups, c.cg = w[1];
    for (const Axis& a : axes) c.axes.push_back({a.in, a.out, a.k, a.s, a.d, a.pb});
    auto at = [](ExprRef a, ExprRef b, const std::vector<ExprRef>& rest) {
      std::vector<ExprRef> i = {std::move(a), std::move(b)};
      i.insert(i.end(), rest.begin(), rest.end());
      return i;
    };
    c.x = [&](ExprRef nb, ExprRef ch, const std::vector<ExprRef>& pos) {
      return kb.valueAt(n.inputs[0], Index::ofDims(x, at(nb, ch, pos)));
    };
    c.w = [&](ExprRef oc, ExprRef ic, const std::vector<ExprRef>& taps) {
      return kb.valueAt(n.inputs[1], Index::ofDims(w, at(oc, ic, taps)));
    };
    c.out = [&](ExprRef nb, ExprRef oc, const std::vector<ExprRef>& o, ExprRef acc) {
      if (hasBias) acc = add(acc, kb.valueAt(n.inputs[2], Index::ofDims({y[1]}, {oc})));
      return sink(Index::ofDims(y, at(nb, oc, o)), acc);
    };
    return lowerConvGemmNest(kb, c);
  }
  // Rows shorter than a vector: the lanes go to output channels instead.
  if (groups == 1 && channelTilesFit(y) && kb.constantOf(n.inputs[1])) {
    std::vector<ConvAxis> ca;
    for (const Axis& a : axes) ca.push_back({a.in, a.out, a.k, a.s, a.d, a.pb});
    return lowerConvChannelTiled(kb, n, x, w, y, ca, hasBias, sink);
  }
  WindowNest nest(kb, n, WindowOp::Conv, x, y, axes);
  nest.setConv(w, groups, hasBias);
  return nest.build(sink);
}

std::vector<StmtRef> lowerPool(KernelBuilder& kb, const Node& n, const KernelBuilder::Sink& sink) {
  std::vector<int64_t> x = kb.shapeOf(n.inputs[0]), y = kb.shapeOf(n.outputs[0]);
  if (!checkNC(kb, n, x, y)) return {};
  if (y[1] != x[1]) {
    kb.fail(Status::error("the channel dims of input and output differ", nodePlace(n)));
    return {};
  }
  auto ks = n.attrs.getInts("kernel_shape");
  if (!ks || ks->size() != x.size() - 2) {
    kb.fail(Status::error(
        "kernel_shape must name " + std::to_string(x.size() - 2) + " spatial sizes", nodePlace(n)));
    return {};
  }

  std::vector<Axis> axes;
  if (!resolveAxes(kb, n, x, y, *ks, true, axes)) return {};
  bool isMax = n.op == "MaxPool";
  if (isMax && n.outputs.size() > 1) return maxPoolWithIndices(kb, n, x, y, axes, sink);
  WindowNest nest(kb, n, isMax ? WindowOp::Max : WindowOp::Avg, x, y, axes);
  nest.setIncludePad(n.attrs.getInt("count_include_pad", 0) != 0);
  return nest.build(sink);
}

}  // namespace fuselens
