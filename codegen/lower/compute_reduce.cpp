// Compute definitions of the reductions ReduceSum, ReduceMean, ReduceMax,
// ReduceMin, ReduceProd, ReduceSumSquare, ReduceL1, ReduceL2, ReduceLogSum and
// ReduceLogSumExp (max-subtracted) (opset-18 form: axes as an optional
// constant input; keepdims, noop_with_empty_axes) and of LayerNormalization (normalized over the
// axes from `axis` to the last; Y, and the optional Mean and InvStdDev).
//
// A reduction is one loop nest over its result with an accumulator over the
// reduced positions; the result goes to the Sink (a fused epilogue applies).
// When the input's last axis is reduced and the schedule's reduceLanes = L > 0,
// that axis is read L lanes at a time into a local vector of partial results
// (lane l takes elements l, l+L, ...), combined at the end with the tail; this
// is what lets a row reduction run at vector width. When the last axis is kept
// (a pooling over NCHWc's spatial dims, a mean over a sequence), the reduced
// positions are the outer loops and a tile of the last axis is the vector: one
// local accumulator per output column, every load contiguous (columnReduce).
// LayerNorm is three passes
// over a row: the mean, the variance about it (both lane-parallel), then
// (x - mean) / sqrt(var + eps) * scale + bias handed to the Sink.
#include <cmath>
#include <cstdint>
#include <functional>
#include <set>

#include "codegen/lower/compute.h"

namespace fuselens {
namespace {

struct Combine {
  double init;
  std::function<ExprRef(ExprRef, ExprRef)> op;
  // Integer Max/Min: an i64 accumulator starting at `intInit` (exact).
  // Integer Sum/Prod: an f64 accumulator (`f64`), as eager and ONNX Runtime
  // accumulate them. Float data leaves both unset and accumulates in f32.
  std::optional<int64_t> intInit;
  bool f64 = false;
  DType accType() const { return intInit ? DType::I64 : f64 ? DType::F64 : DType::F32; }
  ExprRef initExpr() const {
    return intInit ? intConst(*intInit) : floatConst(init, f64 ? DType::F64 : DType::F32);
  }
};

// The range of integer dtype t: what eager's (and ORT's) saturating store clamps to.
std::pair<int64_t, int64_t> intRange(DType t) {
  switch (t) {
    case DType::I8:
      return {INT8_MIN, INT8_MAX};
    case DType::U8:
      return {0, UINT8_MAX};
    case DType::I16:
      return {INT16_MIN, INT16_MAX};
    case DType::I32:
      return {INT32_MIN, INT32_MAX};
    default:
      return {INT64_MIN, INT64_MAX};
  }
}

Combine combineOf(const std::string& op) {
  if (op == "ReduceProd") return {1.0, [](ExprRef a, ExprRef b) { return mul(a, b); }};
  if (op == "ReduceMax")
    return {-INFINITY, [](ExprRef a, ExprRef b) { return binary(BinOp::Max, a, b); }};
  if (op == "ReduceMin")
    return {INFINITY, [](ExprRef a, ExprRef b) { return binary(BinOp::Min, a, b); }};
  return {0.0, [](ExprRef a, ExprRef b) { return add(a, b); }};
}

// acc = combine over r in [0, len) of f(r), with lane partials when lanes >= 2.
// `around` wraps the lane loop and the tail in outer loops (other reduced dims).
std::vector<StmtRef> laneReduce(
    KernelBuilder& kb, int64_t len, int64_t lanes, const Combine& c, Var acc,
    const std::function<ExprRef(ExprRef)>& f,
    const std::function<std::vector<StmtRef>(std::vector<StmtRef>)>& around) {
  std::vector<StmtRef> out = {let(acc, c.initExpr())};
  if (lanes < 2 || len < lanes) {
    Var r = kb.newLoopVar();
    for (StmtRef& s : around(
             {pinnedLoop(r, len, ForKind::Serial, {assign(acc, c.op(varRef(acc), f(varRef(r))))})}))
      out.push_back(std::move(s));
    return out;
  }
  LoopFunc& fn = kb.func();
  const Buffer& part = fn.buffer(fn.addBuffer("part" + std::to_string(fn.buffers.size()),
                                              BufferKind::Local, c.accType(), {lanes}));
  int64_t chunks = len / lanes, tail = len - chunks * lanes;
  std::vector<StmtRef> body;
  Var l0 = kb.newLoopVar();
  body.push_back(
      pinnedLoop(l0, lanes, ForKind::Vectorized, {store(part, varRef(l0), c.initExpr())}));
  Var ch = kb.newLoopVar(), l = kb.newLoopVar();
  std::vector<StmtRef> inner = {
      pinnedLoop(ch, chunks, ForKind::Serial,
                 {pinnedLoop(l, lanes, ForKind::Vectorized,
                             {store(part, varRef(l),
                                    c.op(load(part, varRef(l)),
                                         f(add(mul(varRef(ch), intConst(lanes)), varRef(l)))))})})};
  if (tail > 0) {
    Var t = kb.newLoopVar();
    inner.push_back(
        pinnedLoop(t, tail, ForKind::Serial,
                   {assign(acc, c.op(varRef(acc), f(add(intConst(chunks * lanes), varRef(t)))))}));
  }
  for (StmtRef& s : around(inner)) body.push_back(std::move(s));
  Var l2 = kb.newLoopVar();
  body.push_back(pinnedLoop(l2, lanes, ForKind::Unrolled,
                            {assign(acc, c.op(varRef(acc), load(part, varRef(l2))))}));
  out.push_back(allocate(part, body));
  return out;
}

// What each element contributes before combining: its square or magnitude.
ExprRef reduceTerm(const std::string& op, ExprRef v) {
  if (op == "ReduceSumSquare" || op == "ReduceL2") return mul(v, v);
  if (op == "ReduceL1") return unary(UnOp::Abs, v);
  return v;
}

// The reduced value's last steps: the mean's scale, the log, the root.
ExprRef finishReduce(const std::string& op, ExprRef v, int64_t count) {
  if (op == "ReduceLogSum") v = unary(UnOp::Log, v);
  if (op == "ReduceMean" && count > 0) v = mul(v, floatConst(1.0 / double(count)));
  if (op == "ReduceL2") v = unary(UnOp::Sqrt, v);
  return v;
}

// The tile of a kept last axis of length len that columnReduce accumulates at
// once: the largest of 256, 128, ..., 8 that divides len; 0 (no column path)
// when none does. A tile from this fixed set, never len itself: a symbolic
// kernel generalizes its loops over a dim, and a local buffer of len floats
// would then be a stack array of any length (a segfault at len = 3M).
int64_t columnTile(int64_t len) {
  for (int64_t t = 256; t >= 8; t /= 2)
    if (len % t == 0) return t;
  return 0;
}

// A reduction whose last axis is kept: loops over the output with the last
// axis in tiles of `tile`, the reduced axes inside as serial loops, and the
// tile as a vectorized loop into a local accumulator; the original order of
// additions per output element (reduced positions in row-major order) stays.
std::vector<StmtRef> columnReduce(KernelBuilder& kb, const Node& n, const Combine& c,
                                  const std::vector<int64_t>& shape,
                                  const std::vector<int64_t>& out, const std::vector<int64_t>& kept,
                                  const std::vector<int64_t>& reduced, bool keep, int64_t count,
                                  int64_t tile, const KernelBuilder::Sink& sink) {
  const int64_t rank = int64_t(shape.size());
  std::vector<int64_t> tiles = out;
  tiles.back() = out.back() / tile;
  return kb.loopNest(tiles, [&](const Index& at) -> std::vector<StmtRef> {
    std::vector<ExprRef> od = at.dimExprs();
    ExprRef col0 = mul(od.back(), intConst(tile));
    std::vector<ExprRef> d(size_t(rank), intConst(0));
    for (size_t i = 0; i < kept.size(); ++i)
      d[size_t(kept[i])] = keep ? od[size_t(kept[i])] : od[i];
    std::vector<std::pair<Var, int64_t>> loops;
    for (int64_t a : reduced) {
      Var v = kb.newLoopVar();
      d[size_t(a)] = varRef(v);
      loops.emplace_back(v, shape[size_t(a)]);
    }
    LoopFunc& fn = kb.func();
    const Buffer& part = fn.buffer(fn.addBuffer("col" + std::to_string(fn.buffers.size()),
                                                BufferKind::Local, DType::F32, {tile}));
    Var l0 = kb.newLoopVar(), l = kb.newLoopVar(), l2 = kb.newLoopVar();
    std::vector<ExprRef> di = d;
    di.back() = add(col0, varRef(l));
    ExprRef v = reduceTerm(n.op, kb.valueAt(n.inputs[0], Index::ofDims(shape, di)));
    std::vector<StmtRef> acc = {pinnedLoop(
        l, tile, ForKind::Vectorized, {store(part, varRef(l), c.op(load(part, varRef(l)), v))})};
    for (size_t i = loops.size(); i-- > 0;)
      acc = {pinnedLoop(loops[i].first, loops[i].second, ForKind::Serial, acc)};
    std::vector<StmtRef> body = {
        pinnedLoop(l0, tile, ForKind::Vectorized, {store(part, varRef(l0), c.initExpr())})};
    for (StmtRef& s : acc) body.push_back(std::move(s));
    std::vector<ExprRef> oi = od;
    oi.back() = add(col0, varRef(l2));
    ExprRef result = finishReduce(n.op, load(part, varRef(l2)), count);
    body.push_back(pinnedLoop(l2, tile, ForKind::Vectorized, sink(Index::ofDims(out, oi), result)));
    return {allocate(part, body)};
  });
}

}  // namespace

std::vector<StmtRef> lowerReduce(KernelBuilder& kb, const Node& n,
                                 const KernelBuilder::Sink& sink) {
  std::vector<int64_t> shape = kb.shapeOf(n.inputs[0]);
  int64_t rank = int64_t(shape.size());
  std::vector<int64_t> axesList;
  bool hasAxes = n.inputs.size() > 1 && n.inputs[1].valid();
  if (hasAxes) {
    auto c = kb.constantOf(n.inputs[1]);
    if (!c || c->dtype != DType::I64) {
      kb.fail(Status::error("the axes must be a constant i64 tensor for code generation",
                            nodePlace(n)));
      return {};
    }
    for (int64_t i = 0; i < c->numel(); ++i) axesList.push_back(c->data<int64_t>()[i]);
  }
  std::set<int64_t> axes;
  if (axesList.empty() && n.attrs.getInt("noop_with_empty_axes", 0) == 0)
    for (int64_t k = 0; k < rank; ++k) axes.insert(k);
  for (int64_t a : axesList) {
    if (a < -rank || a >= rank) {
      kb.fail(Status::error(
          "axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank),
          nodePlace(n)));
      return {};
    }
    axes.insert(a < 0 ? a + rank : a);
  }
  bool keep = n.attrs.getInt("keepdims", 1) != 0;
  std::vector<int64_t> out, kept;  // kept: the input dims that remain, in order
  int64_t count = 1;
  for (int64_t k = 0; k < rank; ++k) {
    if (axes.count(k)) {
      count *= shape[k];
      if (keep) out.push_back(1);
    } else {
      out.push_back(shape[k]);
      kept.push_back(k);
    }
  }
  if (kb.shapeOf(n.outputs[0]) != out) {
    kb.fail(Status::error("output shape " + formatShape(kb.shapeOf(n.outputs[0])) +
                              " differs from the computed " + formatShape(out),
                          nodePlace(n)));
    return {};
  }
  Combine c = combineOf(n.op);
  // Integer data: computeHandlesDType admits only Max/Min/Sum/Prod. Max/Min
  // compare in i64 from the dtype's bounds, so an empty reduction yields the
  // bound, as eager's saturating store of -inf/+inf does. Sum/Prod add in f64
  // in eager's element order (no lane partials: past 2^53 the order decides
  // the rounding) and saturate to the dtype's range, as eager and ORT do.
  DType inType = kb.graph().value(n.inputs[0]).type.dtype;
  bool integer = computeType(inType) == DType::I64;
  bool intMaxMin = integer && (n.op == "ReduceMax" || n.op == "ReduceMin");
  if (intMaxMin) {
    auto [lo, hi] = intRange(inType);
    c.intInit = n.op == "ReduceMax" ? lo : hi;
  }
  c.f64 = integer && !intMaxMin;
  std::vector<int64_t> reduced(axes.begin(), axes.end());
  bool lastReduced = !reduced.empty() && reduced.back() == rank - 1;
  // A vectorization strategy: schedules without vectors (CUDA's, where a
  // thread per output column already reads rows coalesced; the serial
  // reference) keep one accumulator per output element.
  if (kb.schedule().vectorizeInner && !lastReduced && !reduced.empty() && !integer &&
      n.op != "ReduceLogSumExp" && count > 1)
    if (int64_t tile = columnTile(shape.back()); tile > 0)
      return columnReduce(kb, n, c, shape, out, kept, reduced, keep, count, tile, sink);
  int64_t lanes = lastReduced && !c.f64 ? kb.schedule().reduceLanes : 0;
  return kb.loopNest(out, [&](const Index& at) -> std::vector<StmtRef> {
    std::vector<ExprRef> od = at.dimExprs();
    std::vector<ExprRef> d(size_t(rank), intConst(0));
    for (size_t i = 0; i < kept.size(); ++i)
      d[size_t(kept[i])] = keep ? od[size_t(kept[i])] : od[i];
    // Loops over every reduced dim but the innermost, which laneReduce runs.
    std::vector<std::pair<Var, int64_t>> outerLoops;
    for (size_t i = 0; i + 1 < reduced.size(); ++i) {
      Var v = kb.newLoopVar();
      d[size_t(reduced[i])] = varRef(v);
      outerLoops.emplace_back(v, shape[size_t(reduced[i])]);
    }
    int64_t innerAxis = reduced.empty() ? -1 : reduced.back();
    auto x = [&](ExprRef r) {
      std::vector<ExprRef> di = d;
      if (innerAxis >= 0) di[size_t(innerAxis)] = r;
      ExprRef v = kb.valueAt(n.inputs[0], Index::ofDims(shape, di));
      if (c.f64) v = cast(v, DType::F64);
      return reduceTerm(n.op, v);
    };
    auto around = [&](std::vector<StmtRef> body) {
      for (size_t i = outerLoops.size(); i-- > 0;)
        body = {pinnedLoop(outerLoops[i].first, outerLoops[i].second, ForKind::Serial, body)};
      return body;
    };
    Var acc = kb.newLocal("acc", c.accType());
    std::vector<StmtRef> body;
    std::optional<Var> mx;  // LogSumExp: the max, subtracted before exp so it cannot overflow
    if (n.op == "ReduceLogSumExp" && innerAxis >= 0) {
      mx = kb.newLocal("max");
      body =
          laneReduce(kb, shape[size_t(innerAxis)], lanes, combineOf("ReduceMax"), *mx, x, around);
      // All -inf: exp(x - max) would be NaN; subtract 0 instead and get log(0) = -inf.
      body.push_back(assign(*mx, select(compare(CmpOp::EQ, varRef(*mx), floatConst(-INFINITY)),
                                        floatConst(0), varRef(*mx))));
      auto e = [&](ExprRef r) { return unary(UnOp::Exp, sub(x(r), varRef(*mx))); };
      for (StmtRef& s : laneReduce(kb, shape[size_t(innerAxis)], lanes, c, acc, e, around))
        body.push_back(std::move(s));
    } else if (innerAxis < 0) {  // nothing reduced (noop_with_empty_axes): a copy
      body.push_back(let(acc, x(intConst(0))));
    } else {
      body = laneReduce(kb, shape[size_t(innerAxis)], lanes, c, acc, x, around);
    }
    ExprRef result = varRef(acc);
    if (mx) result = add(unary(UnOp::Log, result), varRef(*mx));
    result = finishReduce(n.op, result, count);
    // An integer sum/product saturates to the dtype's range like eager's store
    // (the f64 -> i64 cast saturates at the i64 range; narrower ones clamp first).
    if (c.f64) {
      auto [lo, hi] = intRange(inType);
      result = binary(BinOp::Min, binary(BinOp::Max, result, floatConst(double(lo), DType::F64)),
                      floatConst(double(hi), DType::F64));
      result = cast(result, DType::I64);
    }
    for (StmtRef& s : sink(at, result)) body.push_back(std::move(s));
    return body;
  });
}

std::vector<StmtRef> lowerLayerNorm(KernelBuilder& kb, const Node& n,
                                    const KernelBuilder::Sink& sink) {
  std::vector<int64_t> shape = kb.shapeOf(n.inputs[0]);
  std::optional<int64_t> rowAxis = rowOpAxis(kb, n);
  if (!rowAxis) return {};
  const int64_t axis = *rowAxis;
  int64_t cols = 1;
  std::vector<int64_t> outer = shape;
  for (int64_t k = axis; k < int64_t(shape.size()); ++k) {
    cols *= shape[size_t(k)];
    outer[size_t(k)] = 1;
  }
  double eps = n.attrs.getFloat("epsilon", 1e-5);
  bool hasBias = n.inputs.size() > 2 && n.inputs[2].valid();
  int64_t lanes = kb.schedule().reduceLanes;
  Combine sum{0.0, [](ExprRef a, ExprRef b) { return add(a, b); }};
  auto none = [](std::vector<StmtRef> b) { return b; };
  return kb.loopNest(outer, [&](const Index& at) -> std::vector<StmtRef> {
    // The row's first element: the normalized dims are 0 in `at`.
    ExprRef base = Index::ofDims(shape, at.dimExprs()).flatExpr();
    auto elem = [&](ExprRef j) { return Index::ofFlat(shape, add(base, j)); };
    auto x = [&](ExprRef j) { return kb.valueAt(n.inputs[0], elem(j)); };
    // Scale and bias over the normalized dims: flat when they hold one row.
    auto param = [&](ValueId v, ExprRef j) {
      std::vector<int64_t> ps = kb.shapeOf(v);
      int64_t pn = 1;
      for (int64_t d : ps) pn *= d;
      return kb.valueAt(v, pn == cols ? Index::ofFlat(ps, j) : broadcastIndex(elem(j), ps));
    };
    Var mean = kb.newLocal("mean"), var = kb.newLocal("var"), inv = kb.newLocal("inv");
    std::vector<StmtRef> body = laneReduce(kb, cols, lanes, sum, mean, x, none);
    body.push_back(assign(mean, mul(varRef(mean), floatConst(1.0 / double(cols)))));
    auto sq = [&](ExprRef j) {
      ExprRef dlt = sub(x(j), varRef(mean));
      return mul(dlt, dlt);
    };
    for (StmtRef& s : laneReduce(kb, cols, lanes, sum, var, sq, none)) body.push_back(std::move(s));
    body.push_back(let(
        inv,
        div(floatConst(1), unary(UnOp::Sqrt, add(mul(varRef(var), floatConst(1.0 / double(cols))),
                                                 floatConst(eps))))));
    // The optional Mean and InvStdDev outputs: one value per row, at the row's position.
    for (size_t k = 1; k < n.outputs.size(); ++k)
      for (StmtRef& s : kb.storeOutput(n.outputs[k], Index::ofFlat(outer, at.flatExpr()),
                                       varRef(k == 1 ? mean : inv)))
        body.push_back(std::move(s));
    Var j = kb.newLoopVar();
    ExprRef y =
        mul(mul(sub(x(varRef(j)), varRef(mean)), varRef(inv)), param(n.inputs[1], varRef(j)));
    if (hasBias) y = add(y, param(n.inputs[2], varRef(j)));
    body.push_back(pinnedLoop(j, cols, ForKind::Vectorized, sink(elem(varRef(j)), y)));
    return body;
  });
}

std::vector<StmtRef> lowerGlobalPool(KernelBuilder& kb, const Node& n,
                                     const KernelBuilder::Sink& sink) {
  std::vector<int64_t> shape = kb.shapeOf(n.inputs[0]);
  if (shape.size() < 3) {
    kb.fail(Status::error(
        "expects an input of rank 3 or more ([N,C,spatial...]), got " + formatShape(shape),
        nodePlace(n)));
    return {};
  }
  std::vector<int64_t> out = {shape[0], shape[1]};
  int64_t cols = 1;
  for (size_t k = 2; k < shape.size(); ++k) {
    cols *= shape[k];
    out.push_back(1);
  }
  if (kb.shapeOf(n.outputs[0]) != out) {
    kb.fail(Status::error("output shape " + formatShape(kb.shapeOf(n.outputs[0])) +
                              " differs from the computed " + formatShape(out),
                          nodePlace(n)));
    return {};
  }
  bool isMax = n.op == "GlobalMaxPool";
  Combine c = combineOf(isMax ? "ReduceMax" : "ReduceSum");
  auto none = [](std::vector<StmtRef> b) { return b; };
  return kb.loopNest(out, [&](const Index& at) -> std::vector<StmtRef> {
    std::vector<ExprRef> od = at.dimExprs();
    ExprRef base = mul(add(mul(od[0], intConst(shape[1])), od[1]), intConst(cols));
    auto x = [&](ExprRef j) { return kb.valueAt(n.inputs[0], Index::ofFlat(shape, add(base, j))); };
    Var acc = kb.newLocal("acc");
    std::vector<StmtRef> body = laneReduce(kb, cols, kb.schedule().reduceLanes, c, acc, x, none);
    ExprRef result = varRef(acc);
    if (!isMax) result = mul(result, floatConst(1.0 / double(cols)));
    for (StmtRef& s : sink(at, result)) body.push_back(std::move(s));
    return body;
  });
}

}  // namespace fuselens
