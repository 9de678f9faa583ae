// Compute definition of Softmax (and LogSoftmax: x - max - log(sum)) with opset-13 semantics:
// normalized along one `axis` (default -1), max-subtracted so large logits do not overflow exp. For
// every position of the other dims: a max pass, a sum-of-exp pass, and a pass
// that hands exp(x - max) / sum to the Sink (where a fused epilogue applies).
// The input expression is inlined in each pass; recomputing a cheap producer is
// better than a temp buffer for it. Over the last axis, with the schedule's
// reduceLanes = L > 0 (4L for rows of at least 16L) and a row of at least L,
// the max and sum passes keep L partial results in a local vector (lane l
// takes elements l, l+L, ...), then combine them in halves (L/2, L/4, ...
// lanes at a time) and finish the row's tail; the third pass is vectorized as usual.
// There Softmax also stores exp(x - max) to a per-row stack buffer in the sum
// pass, and the third pass only scales it: one exp per element, and x is read
// twice instead of three times.
#include <cmath>
#include <functional>
#include <optional>

#include "codegen/lower/compute.h"

namespace fuselens {
namespace {

// Longest row whose exp values are kept on the stack (16K floats = 64 KiB).
constexpr int64_t kKeepRowMax = 16384;

// acc = combine over the L partials in p: folded in halves (a tree of vector
// ops, ~log2(L) deep) rather than one scalar chain of L dependent ops, which on
// rows of a few hundred elements cost as much as the pass itself. `declare`:
// acc is declared here (let) rather than assigned.
std::vector<StmtRef> foldLanes(KernelBuilder& kb, BufferId pid, int64_t lanes, double init,
                               const Var& acc, bool declare,
                               const std::function<ExprRef(ExprRef, ExprRef)>& combine) {
  LoopFunc& fn = kb.func();
  std::vector<StmtRef> out;
  int64_t live = lanes;
  while (live % 2 == 0 && live > 1) {
    live /= 2;
    Var h = kb.newLoopVar();
    const Buffer& p = fn.buffer(pid);
    out.push_back(
        pinnedLoop(h, live, ForKind::Vectorized,
                   {store(p, varRef(h),
                          combine(load(p, varRef(h)), load(p, add(varRef(h), intConst(live)))))}));
  }
  out.push_back(declare ? let(acc, floatConst(init)) : assign(acc, floatConst(init)));
  Var l = kb.newLoopVar();
  out.push_back(pinnedLoop(l, live, ForKind::Unrolled,
                           {assign(acc, combine(varRef(acc), load(fn.buffer(pid), varRef(l))))}));
  return out;
}

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
        pinnedLoop(l0, lanes, ForKind::Vectorized, {store(p(), varRef(l0), floatConst(init))}));
    Var c = kb.newLoopVar(), l = kb.newLoopVar();
    ExprRef pos = add(mul(varRef(c), intConst(lanes)), varRef(l));
    out.push_back(pinnedLoop(c, chunks, ForKind::Serial,
                             {pinnedLoop(l, lanes, ForKind::Vectorized, step(pos, [&](ExprRef v) {
                                           return store(p(), varRef(l),
                                                        combine(load(p(), varRef(l)), v));
                                         }))}));
    for (StmtRef& st : foldLanes(kb, pid, lanes, init, acc, true, combine))
      out.push_back(std::move(st));
    if (tail > 0) {
      Var t = kb.newLoopVar();
      out.push_back(pinnedLoop(t, tail, ForKind::Serial,
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
  body.push_back(pinnedLoop(r, len, ForKind::Vectorized, sink(i3, y)));
  std::vector<StmtRef> wrapped = {allocate(fn.buffer(psum), {allocate(fn.buffer(pmax), body)})};
  if (keep) wrapped = {allocate(fn.buffer(*keep), wrapped)};
  return wrapped;
}

// Softmax over wide last-axis rows, `block` rows per step of the outer loop,
// software-pipelined: the max pass of row r+1 runs inside the exp pass of row r.
//
//   for rb < rows / block:                        // parallel
//     mx = max(x[first row])                      // the only pass that waits on loads
//     for r < block:
//       for c, l:  erow[c*L+l] = exp(x[r][c*L+l] - mx);  psum[l] += erow[..]
//                  pmax[l] = max(pmax[l], x[min(r+1, block-1)][c*L+l])
//       y[r][:] = erow * (1 / sum(psum));  mx = max(pmax)
//
// A row of a few KiB is too short for the hardware prefetcher to run ahead of
// a max pass that needs every line, so with one row per step the row's loads
// and its exp arithmetic ran back to back; here the next row's loads overlap
// this row's exp (16384x1024: 12-15% faster at 1 and 2 threads, measured in
// one process). Moving the stores of row r-1 into the same loop as well was
// slower (the store misses then stall the exp arithmetic).
std::vector<StmtRef> pipelinedRows(KernelBuilder& kb, const Node& n,
                                   const std::vector<int64_t>& shape, int64_t lanes, int64_t block,
                                   const KernelBuilder::Sink& sink) {
  const int64_t len = shape.back(), chunks = len / lanes, tail = len - chunks * lanes;
  const std::vector<int64_t> outer(shape.begin(), shape.end() - 1);
  int64_t rows = 1;
  for (int64_t d : outer) rows *= d;
  LoopFunc& fn = kb.func();
  auto rowDims = [&](ExprRef row, ExprRef pos) {
    std::vector<ExprRef> d = Index::ofFlat(outer, std::move(row)).dimExprs();
    d.push_back(std::move(pos));
    return d;
  };
  auto x = [&](ExprRef row, ExprRef pos) {
    return kb.valueAt(n.inputs[0], Index::ofDims(shape, rowDims(std::move(row), std::move(pos))));
  };
  auto maxOf = [](ExprRef a, ExprRef b) { return binary(BinOp::Max, a, b); };
  auto sumOf = [](ExprRef a, ExprRef b) { return add(a, b); };
  return kb.loopNest({rows / block}, [&](const Index& at) -> std::vector<StmtRef> {
    auto part = [&](const char* name, int64_t size) {
      return fn.addBuffer(name + std::to_string(fn.buffers.size()), BufferKind::Local, DType::F32,
                          {size});
    };
    BufferId pmax = part("pmax", lanes), psum = part("psum", lanes), erow = part("erow", len);
    Var mx = kb.newLocal("max"), sum = kb.newLocal("sum"), inv = kb.newLocal("inv");
    ExprRef first = mul(at.dimExprs()[0], intConst(block));
    auto fill = [&](BufferId b, double v) {
      Var l = kb.newLoopVar();
      return pinnedLoop(l, lanes, ForKind::Vectorized,
                        {store(fn.buffer(b), varRef(l), floatConst(v))});
    };
    // mx = max over row `row`'s tail, after the lanes were folded into mx.
    auto maxTail = [&](ExprRef row) -> std::vector<StmtRef> {
      if (tail == 0) return {};
      Var t = kb.newLoopVar();
      return {pinnedLoop(
          t, tail, ForKind::Serial,
          {assign(mx, maxOf(varRef(mx), x(row, add(intConst(chunks * lanes), varRef(t)))))})};
    };
    std::vector<StmtRef> body = {fill(pmax, -INFINITY)};
    {
      Var c = kb.newLoopVar(), l = kb.newLoopVar();
      ExprRef pos = add(mul(varRef(c), intConst(lanes)), varRef(l));
      const Buffer& p = fn.buffer(pmax);
      body.push_back(pinnedLoop(
          c, chunks, ForKind::Serial,
          {pinnedLoop(l, lanes, ForKind::Vectorized,
                      {store(p, varRef(l), maxOf(load(p, varRef(l)), x(first, pos)))})}));
    }
    for (StmtRef& st : foldLanes(kb, pmax, lanes, -INFINITY, mx, true, maxOf)) body.push_back(st);
    for (StmtRef& st : maxTail(first)) body.push_back(st);

    Var r = kb.newLoopVar();
    ExprRef row = add(first, varRef(r));
    ExprRef next = add(first, binary(BinOp::Min, add(varRef(r), intConst(1)), intConst(block - 1)));
    const Buffer& e = fn.buffer(erow);
    // erow[pos] = exp(x[row][pos] - mx); the value as read back (summed).
    auto expAt = [&](ExprRef pos, std::vector<StmtRef>& out) {
      out.push_back(store(e, pos, unary(UnOp::Exp, sub(x(row, pos), varRef(mx)))));
      return load(e, pos);
    };
    std::vector<StmtRef> step = {fill(psum, 0.0), fill(pmax, -INFINITY)};
    {
      Var c = kb.newLoopVar(), l = kb.newLoopVar();
      ExprRef pos = add(mul(varRef(c), intConst(lanes)), varRef(l));
      const Buffer& ps = fn.buffer(psum);
      const Buffer& pm = fn.buffer(pmax);
      std::vector<StmtRef> lane;
      ExprRef ev = expAt(pos, lane);
      lane.push_back(store(ps, varRef(l), add(load(ps, varRef(l)), ev)));
      lane.push_back(store(pm, varRef(l), maxOf(load(pm, varRef(l)), x(next, pos))));
      step.push_back(pinnedLoop(c, chunks, ForKind::Serial,
                                {pinnedLoop(l, lanes, ForKind::Vectorized, lane)}));
    }
    for (StmtRef& st : foldLanes(kb, psum, lanes, 0.0, sum, true, sumOf)) step.push_back(st);
    if (tail > 0) {
      Var t = kb.newLoopVar();
      std::vector<StmtRef> one;
      ExprRef ev = expAt(add(intConst(chunks * lanes), varRef(t)), one);
      one.push_back(assign(sum, add(varRef(sum), ev)));
      step.push_back(pinnedLoop(t, tail, ForKind::Serial, one));
    }
    // One division per row; the normalize pass multiplies (within an ulp of dividing).
    step.push_back(let(inv, div(floatConst(1), varRef(sum))));
    Var q = kb.newLoopVar();
    Index out = Index::ofDims(shape, rowDims(row, varRef(q)));
    step.push_back(
        pinnedLoop(q, len, ForKind::Vectorized, sink(out, mul(load(e, varRef(q)), varRef(inv)))));
    // The next row's max, its lanes gathered above.
    for (StmtRef& st : foldLanes(kb, pmax, lanes, -INFINITY, mx, false, maxOf)) step.push_back(st);
    for (StmtRef& st : maxTail(next)) step.push_back(st);
    body.push_back(pinnedLoop(r, block, ForKind::Serial, step));
    return {
        allocate(fn.buffer(erow), {allocate(fn.buffer(psum), {allocate(fn.buffer(pmax), body)})})};
  });
}

// Rows per pipelined step: a divisor of the row count that leaves at least 8
// steps for the threads; 1 (not pipelined) when none does.
int64_t pipelineBlock(int64_t rows) {
  for (int64_t b : {8, 4, 2})
    if (rows % b == 0 && rows / b >= 8) return b;
  return 1;
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
  const bool lastAxis = axis == int64_t(shape.size()) - 1;
  int64_t rows = 1;
  for (int64_t d : outer) rows *= d;
  // Rows of 2-8 KiB take the pipelined nest. Measured in one process at 2
  // threads: 512, 1024 and 2048 wide 14-35% faster; 256 wide slower (the
  // per-row setup outweighs the overlap), 4096 wide even (the prefetcher keeps up).
  if (lanes >= 2 && lastAxis && n.op == "Softmax" && len >= 512 && len <= 2048 && len >= lanes &&
      pipelineBlock(rows) > 1)
    return pipelinedRows(kb, n, shape, lanes, pipelineBlock(rows), sink);
  if (lanes >= 2 && lastAxis && len >= lanes)
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
