// Compute definition of Softmax (and LogSoftmax: x - max - log(sum)) with opset-13 semantics:
// normalized along one `axis` (default -1), max-subtracted so large logits do not overflow exp. For
// every position of the other dims: a max pass, a sum-of-exp pass, and a pass
// that hands exp(x - max) / sum to the Sink (where a fused epilogue applies).
// The input expression is inlined in each pass; recomputing a cheap producer is
// better than a temp buffer for it. Over the last axis, with the schedule's
// reduceLanes = L > 0 (4L for rows of at least 16L) and a row of at least L,
// the max and sum passes keep L partial results in a local vector (lane l
// takes elements l, l+L, ...), then
// combine them and finish the row's tail; the third pass is vectorized as usual.
// There Softmax also stores exp(x - max) to a per-row stack buffer in the sum
// pass, and the third pass only scales it: one exp per element, and x is read
// twice instead of three times.
#include <cmath>
#include <functional>
#include <optional>

#include "codegen/compute.h"

namespace fuselens {
namespace {

StmtRef kindLoop(const Var& v, int64_t extent, ForKind k, std::vector<StmtRef> body) {
  StmtRef s = forLoop(v, extent, std::move(body));
  s->forKind = k;
  s->pinned = true;
  return s;
}

// Longest row whose exp values are kept on the stack (16K floats = 64 KiB).
constexpr int64_t kKeepRowMax = 16384;

// One row with lane-parallel max and sum (see the file comment).
std::vector<StmtRef> vectorRows(KernelBuilder& kb, const Node& n, const std::vector<int64_t>& shape,
                                int64_t axis, int64_t lanes, const Index& at,
                                const KernelBuilder::Sink& sink) {
  int64_t len = shape[axis], chunks = len / lanes, tail = len - chunks * lanes;
  std::vector<ExprRef> dims = at.dimExprs();
  auto x = [&](ExprRef pos) {
    std::vector<ExprRef> d = dims;
    d[axis] = pos;
    return kb.valueAt(n.inputs[0], Index::ofDims(shape, d));
  };
  LoopFunc& fn = kb.func();
  // Buffers by id: a later addBuffer (here or in valueAt) moves the table.
  auto part = [&](const char* name, int64_t size) {
    return fn.addBuffer(name + std::to_string(fn.buffers.size()), BufferKind::Local, DType::F32,
                        {size});
  };
  BufferId pmax = part("pmax", lanes), psum = part("psum", lanes);
  Var mx = kb.newLocal("max"), sum = kb.newLocal("sum");
  // A lane-parallel pass: part[l] = combine(part[l], f(x[c*L + l])), then the
  // scalar `acc` = combine over lanes and the tail.
  // With `keep`, f's values are also stored to keep[pos] and accumulated from there.
  auto pass = [&](BufferId pid, double init, Var acc,
                  const std::function<ExprRef(ExprRef, ExprRef)>& combine,
                  const std::function<ExprRef(ExprRef)>& f, std::optional<BufferId> keep) {
    auto step = [&](ExprRef pos, const std::function<StmtRef(ExprRef)>& use) {
      if (!keep) return std::vector<StmtRef>{use(f(x(pos)))};
      ExprRef v = f(x(pos));
      return std::vector<StmtRef>{store(fn.buffer(*keep), pos, v),
                                  use(load(fn.buffer(*keep), pos))};
    };
    auto p = [&]() -> const Buffer& { return fn.buffer(pid); };
    std::vector<StmtRef> out;
    Var l0 = kb.newLoopVar();
    out.push_back(
        kindLoop(l0, lanes, ForKind::Vectorized, {store(p(), varRef(l0), floatConst(init))}));
    Var c = kb.newLoopVar(), l = kb.newLoopVar();
    ExprRef pos = add(mul(varRef(c), intConst(lanes)), varRef(l));
    out.push_back(kindLoop(c, chunks, ForKind::Serial,
                           {kindLoop(l, lanes, ForKind::Vectorized, step(pos, [&](ExprRef v) {
                                       return store(p(), varRef(l),
                                                    combine(load(p(), varRef(l)), v));
                                     }))}));
    out.push_back(let(acc, floatConst(init)));
    Var l2 = kb.newLoopVar();
    out.push_back(kindLoop(l2, lanes, ForKind::Unrolled,
                           {assign(acc, combine(varRef(acc), load(p(), varRef(l2))))}));
    if (tail > 0) {
      Var t = kb.newLoopVar();
      out.push_back(kindLoop(t, tail, ForKind::Serial,
                             step(add(intConst(chunks * lanes), varRef(t)), [&](ExprRef v) {
                               return assign(acc, combine(varRef(acc), v));
                             })));
    }
    return out;
  };
  auto maxOf = [](ExprRef a, ExprRef b) { return binary(BinOp::Max, a, b); };
  bool logOut = n.op == "LogSoftmax";
  // Softmax keeps the row's exp(x - max) in a stack buffer (up to 64 KiB) so the
  // normalize pass scales it instead of reading x and computing exp again.
  std::optional<BufferId> keep;
  if (!logOut && len <= kKeepRowMax) keep = part("erow", len);
  std::vector<StmtRef> body = pass(
      pmax, -INFINITY, mx, maxOf, [](ExprRef v) { return v; }, std::nullopt);
  std::vector<StmtRef> sums = pass(
      psum, 0.0, sum, [](ExprRef a, ExprRef b) { return add(a, b); },
      [&](ExprRef v) { return unary(UnOp::Exp, sub(v, varRef(mx))); }, keep);
  body.insert(body.end(), sums.begin(), sums.end());
  // One division per row; the normalize pass multiplies (within an ulp of dividing).
  // LogSoftmax: x - max - log(sum), one log per row.
  Var inv = kb.newLocal("inv");
  body.push_back(
      let(inv, logOut ? unary(UnOp::Log, varRef(sum)) : div(floatConst(1), varRef(sum))));
  Var r = kb.newLoopVar();
  std::vector<ExprRef> d = dims;
  d[axis] = varRef(r);
  Index i3 = Index::ofDims(shape, d);
  ExprRef y;
  if (keep) {
    y = mul(load(fn.buffer(*keep), varRef(r)), varRef(inv));
  } else {
    ExprRef shifted = sub(kb.valueAt(n.inputs[0], i3), varRef(mx));
    y = logOut ? sub(shifted, varRef(inv)) : mul(unary(UnOp::Exp, shifted), varRef(inv));
  }
  body.push_back(kindLoop(r, len, ForKind::Vectorized, sink(i3, y)));
  std::vector<StmtRef> wrapped = {allocate(fn.buffer(psum), {allocate(fn.buffer(pmax), body)})};
  if (keep) wrapped = {allocate(fn.buffer(*keep), wrapped)};
  return wrapped;
}

}  // namespace

std::vector<StmtRef> lowerSoftmax(KernelBuilder& kb, const Node& n,
                                  const KernelBuilder::Sink& sink) {
  std::vector<int64_t> shape = kb.shapeOf(n.inputs[0]);
  std::optional<int64_t> rowAxis = rowOpAxis(kb, n);
  if (!rowAxis) return {};
  const int64_t axis = *rowAxis;
  std::vector<int64_t> outer = shape;
  outer[axis] = 1;
  int64_t len = shape[axis];

  int64_t lanes = kb.schedule().reduceLanes;
  // Long rows: 4x the partial results, so the max and sum chains (4-cycle
  // latency per vector op) run 4 apart instead of serializing the pass.
  if (lanes >= 2 && len >= 16 * lanes) lanes *= 4;
  if (lanes >= 2 && axis == int64_t(shape.size()) - 1 && len >= lanes)
    return kb.loopNest(
        outer, [&](const Index& at) { return vectorRows(kb, n, shape, axis, lanes, at, sink); });
  return kb.loopNest(outer, [&](const Index& at) -> std::vector<StmtRef> {
    std::vector<ExprRef> dims = at.dimExprs();
    // The input at position r along the axis, with a fresh loop counter per pass.
    auto along = [&](Var& r) {
      r = kb.newLoopVar();
      std::vector<ExprRef> d = dims;
      d[axis] = varRef(r);
      return Index::ofDims(shape, d);
    };
    Var mx = kb.newLocal("max"), sum = kb.newLocal("sum"), r1, r2, r3;
    Index i1 = along(r1);
    ExprRef x1 = kb.valueAt(n.inputs[0], i1);
    Index i2 = along(r2);
    ExprRef e2 = unary(UnOp::Exp, sub(kb.valueAt(n.inputs[0], i2), varRef(mx)));
    Index i3 = along(r3);
    ExprRef s3 = sub(kb.valueAt(n.inputs[0], i3), varRef(mx));
    ExprRef y3 = n.op == "LogSoftmax" ? sub(s3, unary(UnOp::Log, varRef(sum)))
                                      : div(unary(UnOp::Exp, s3), varRef(sum));
    return {
        let(mx, floatConst(-INFINITY)),
        forLoop(r1, len, {assign(mx, binary(BinOp::Max, varRef(mx), x1))}),
        let(sum, floatConst(0)),
        forLoop(r2, len, {assign(sum, add(varRef(sum), e2))}),
        forLoop(r3, len, sink(i3, y3)),
    };
  });
}

}  // namespace fuselens
