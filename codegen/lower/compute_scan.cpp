// Compute definitions of the reductions along one axis that keep a position or
// a running value: ArgMax / ArgMin (keepdims, select_last_index), CumSum
// (exclusive, reverse) and TopK (values and indices). Each is a loop nest over
// the other dims with a serial loop along the axis:
//
//   ArgMax:  best = x[0]; at = 0; for r: if (x[r] > best) {best = x[r]; at = r}
//            (>= with select_last_index, so the last of equal values wins)
//   CumSum:  acc = 0; for r: out[r] = acc + x[r]; acc += x[r]   (exclusive:
//            out[r] = acc before the add; reverse: r runs from the end)
//
// Any dtype, computed as the eager kernels do: comparisons run in the compute
// type (i64 for every integer width and bool, so an i64 past 2^53 compares
// exactly; f32 for f16/bf16, whose values it holds exactly; f64 for f64), and
// CumSum adds integers in wrapping i64 and floats in f64, rounded on store.
#include "codegen/lower/compute_scan.h"

namespace fuselens {
namespace {

// A value in the type it is compared in: its compute type, with bool widened to
// i64 so that every integer and bool orders as a signed i64.
ExprRef ordered(ExprRef x) { return x->type == DType::Bool ? cast(std::move(x), DType::I64) : x; }

ExprRef zeroOf(DType t) { return t == DType::I64 ? intConst(0) : floatConst(0, t); }

StmtRef serialLoop(const Var& v, int64_t extent, std::vector<StmtRef> body) {
  StmtRef s = forLoop(v, extent, std::move(body));
  s->pinned = true;  // a running value: order matters
  return s;
}

// The axis of n, or an error (the `axis` attribute, or CumSum's constant input).
std::optional<int64_t> axisOf(KernelBuilder& kb, const Node& n, int64_t rank) {
  int64_t a = n.attrs.getInt("axis", n.op == "TopK" ? -1 : 0);
  if (n.op == "CumSum") {
    auto c = n.inputs.size() > 1 && n.inputs[1].valid() ? kb.constantOf(n.inputs[1]) : nullptr;
    if (!c || c->numel() != 1) {
      kb.fail(Status::error("CumSum needs a constant axis for code generation", nodePlace(n)));
      return std::nullopt;
    }
    a = int64_t(c->at(0));
  }
  if (a < -rank || a >= rank) {
    kb.fail(Status::error(
        "axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank),
        nodePlace(n)));
    return std::nullopt;
  }
  return a < 0 ? a + rank : a;
}

std::vector<StmtRef> lowerArg(KernelBuilder& kb, const Node& n, const KernelBuilder::Sink& sink,
                              int64_t axis) {
  std::vector<int64_t> shape = kb.shapeOf(n.inputs[0]);
  bool keep = n.attrs.getInt("keepdims", 1) != 0;
  std::vector<int64_t> out = shape;
  out[size_t(axis)] = 1;
  if (!keep) out.erase(out.begin() + axis);
  if (kb.shapeOf(n.outputs[0]) != out) {
    kb.fail(Status::error("output shape " + formatShape(kb.shapeOf(n.outputs[0])) +
                              " differs from the computed " + formatShape(out),
                          nodePlace(n)));
    return {};
  }
  bool isMax = n.op == "ArgMax", last = n.attrs.getInt("select_last_index", 0) != 0;
  CmpOp better = isMax ? (last ? CmpOp::GE : CmpOp::GT) : (last ? CmpOp::LE : CmpOp::LT);
  std::vector<int64_t> outer = shape;
  outer[size_t(axis)] = 1;
  return kb.loopNest(outer, [&](const Index& at) -> std::vector<StmtRef> {
    std::vector<ExprRef> d = at.dimExprs();
    Var r = kb.newLoopVar();
    d[size_t(axis)] = varRef(r);
    ExprRef x = ordered(kb.valueAt(n.inputs[0], Index::ofDims(shape, d)));
    Var best = kb.newLocal("best", x->type), pos = kb.newLocal("pos", DType::I64);
    d[size_t(axis)] = intConst(0);
    // A NaN first element stays (nothing compares above it) and later NaNs never
    // win: the ordered compares are false on NaN, as eager's are.
    std::vector<StmtRef> body = {
        let(best, ordered(kb.valueAt(n.inputs[0], Index::ofDims(shape, d)))),
        let(pos, intConst(0))};
    Var xv = kb.newLocal("v", x->type);
    ExprRef take = compare(better, varRef(xv), varRef(best));
    body.push_back(serialLoop(r, shape[size_t(axis)],
                              {let(xv, x), assign(pos, select(take, varRef(r), varRef(pos))),
                               assign(best, select(take, varRef(xv), varRef(best)))}));
    Index o = keep ? at : Index::ofFlat(out, at.flatExpr());
    for (StmtRef& s : sink(o, varRef(pos))) body.push_back(std::move(s));
    return body;
  });
}

std::vector<StmtRef> lowerCumSum(KernelBuilder& kb, const Node& n, const KernelBuilder::Sink& sink,
                                 int64_t axis) {
  std::vector<int64_t> shape = kb.shapeOf(n.inputs[0]);
  if (kb.shapeOf(n.outputs[0]) != shape) {
    kb.fail(Status::error("output shape differs from the input shape", nodePlace(n)));
    return {};
  }
  bool exclusive = n.attrs.getInt("exclusive", 0) != 0, reverse = n.attrs.getInt("reverse", 0) != 0;
  int64_t len = shape[size_t(axis)];
  std::vector<int64_t> outer = shape;
  outer[size_t(axis)] = 1;
  return kb.loopNest(outer, [&](const Index& at) -> std::vector<StmtRef> {
    std::vector<ExprRef> d = at.dimExprs();
    Var r = kb.newLoopVar();
    d[size_t(axis)] = reverse ? sub(intConst(len - 1), varRef(r)) : varRef(r);
    Index i = Index::ofDims(shape, d);
    ExprRef x = kb.valueAt(n.inputs[0], i);
    DType ct = x->type, accType = ct == DType::F32 || ct == DType::F64 ? DType::F64 : DType::I64;
    x = cast(x, accType);
    Var acc = kb.newLocal("acc", accType), xv = kb.newLocal("v", accType);
    ExprRef out = cast(varRef(acc), ct);  // f64 -> f32 rounds once, as eager's store
    std::vector<StmtRef> step = {let(xv, x)};
    if (exclusive) {
      for (StmtRef& s : sink(i, out)) step.push_back(std::move(s));
      step.push_back(assign(acc, add(varRef(acc), varRef(xv))));
    } else {
      step.push_back(assign(acc, add(varRef(acc), varRef(xv))));
      for (StmtRef& s : sink(i, out)) step.push_back(std::move(s));
    }
    return {let(acc, zeroOf(accType)), serialLoop(r, len, std::move(step))};
  });
}

ExprRef both(ExprRef a, ExprRef b) { return select(a, std::move(b), a); }
ExprRef either(ExprRef a, ExprRef b) { return select(a, a, std::move(b)); }

// TopK's order on (value, index): the better value first, equal values by the
// lower index (eager's stable sort, as ONNX Runtime orders ties). A total order
// also with NaN, which ranks as the greatest value, as in ONNX Runtime (first
// when largest, last when smallest): the k passes then take k distinct
// elements, where plain compares would leave a NaN unranked.
struct TopKOrder {
  CmpOp beats;
  bool floats;
  ExprRef isNan(const ExprRef& v) const { return compare(CmpOp::NE, v, v); }
  // a ranks before b on value alone.
  ExprRef valueBefore(const ExprRef& a, const ExprRef& b) const {
    ExprRef c = compare(beats, a, b);
    if (!floats) return c;
    return beats == CmpOp::GT ? either(both(isNan(a), compare(CmpOp::EQ, b, b)), c)
                              : either(both(compare(CmpOp::EQ, a, a), isNan(b)), c);
  }
  ExprRef sameRank(const ExprRef& a, const ExprRef& b) const {
    ExprRef c = compare(CmpOp::EQ, a, b);
    return floats ? either(c, both(isNan(a), isNan(b))) : c;
  }
};

// TopK: k selection passes per row. Pass j takes the first element in the
// order above that ranks after the one pass j-1 took, so no element is taken
// twice and no scratch is needed. The scan runs by rising index, so a later
// element replaces the best only when its value ranks strictly before.
std::vector<StmtRef> lowerTopK(KernelBuilder& kb, const Node& n, const KernelBuilder::Sink& sink,
                               int64_t axis) {
  std::vector<int64_t> shape = kb.shapeOf(n.inputs[0]);
  int64_t k = n.attrs.getInt("k", -1);
  if (n.inputs.size() > 1 && n.inputs[1].valid()) {
    auto c = kb.constantOf(n.inputs[1]);
    k = c && c->numel() == 1 ? int64_t(c->at(0)) : -1;
  }
  std::vector<int64_t> out = shape;
  out[size_t(axis)] = k;
  if (k < 0 || k > shape[size_t(axis)] || kb.shapeOf(n.outputs[0]) != out ||
      kb.shapeOf(n.outputs[1]) != out) {
    kb.fail(Status::error(
        "TopK needs a constant k within the axis and outputs of shape " + formatShape(out),
        nodePlace(n)));
    return {};
  }
  bool largest = n.attrs.getInt("largest", 1) != 0;
  std::vector<int64_t> outer = shape;
  outer[size_t(axis)] = 1;
  return kb.loopNest(outer, [&](const Index& at) -> std::vector<StmtRef> {
    std::vector<ExprRef> d = at.dimExprs();
    Var j = kb.newLoopVar(), r = kb.newLoopVar();
    d[size_t(axis)] = varRef(r);
    ExprRef raw = kb.valueAt(n.inputs[0], Index::ofDims(shape, d));
    ExprRef x = ordered(raw);
    DType vt = x->type;
    TopKOrder ord{largest ? CmpOp::GT : CmpOp::LT, vt != DType::I64};
    Var pv = kb.newLocal("prev", vt), pi = kb.newLocal("previ", DType::I64);
    Var best = kb.newLocal("best", vt), bi = kb.newLocal("besti", DType::I64);
    Var v = kb.newLocal("v", vt);
    ExprRef ri = varRef(r);
    // Ranks after (pv, pi): a value after pv's, or the same rank at a higher index.
    ExprRef after =
        either(ord.valueBefore(varRef(pv), varRef(v)),
               both(ord.sameRank(varRef(v), varRef(pv)), compare(CmpOp::GT, ri, varRef(pi))));
    ExprRef eligible = either(compare(CmpOp::EQ, varRef(j), intConst(0)), after);
    ExprRef take = both(eligible, either(compare(CmpOp::LT, varRef(bi), intConst(0)),
                                         ord.valueBefore(varRef(v), varRef(best))));
    Var t = kb.newLocal("take", DType::Bool);  // decided before best changes
    std::vector<StmtRef> scan = {let(v, x), let(t, take),
                                 assign(best, select(varRef(t), varRef(v), varRef(best))),
                                 assign(bi, select(varRef(t), ri, varRef(bi)))};
    std::vector<ExprRef> od = at.dimExprs();
    od[size_t(axis)] = varRef(j);
    Index o = Index::ofDims(out, od);
    std::vector<StmtRef> pass = {let(best, zeroOf(vt)), let(bi, intConst(-1)),
                                 serialLoop(r, shape[size_t(axis)], scan)};
    for (StmtRef& s : sink(o, cast(varRef(best), raw->type))) pass.push_back(std::move(s));
    for (StmtRef& s : kb.storeOutput(n.outputs[1], o, varRef(bi))) pass.push_back(std::move(s));
    pass.push_back(assign(pv, varRef(best)));
    pass.push_back(assign(pi, varRef(bi)));
    return {let(pv, zeroOf(vt)), let(pi, intConst(-1)), serialLoop(j, k, pass)};
  });
}

}  // namespace

bool isScanOp(const std::string& op) {
  return op == "ArgMax" || op == "ArgMin" || op == "CumSum" || op == "TopK";
}

Status checkScanOp(const Graph& body, const Node& n) {
  size_t outs = n.op == "TopK" ? 2 : 1;
  if (n.inputs.empty() || !n.inputs[0].valid() || n.outputs.size() != outs)
    return Status::error(
        n.op + " needs a data input and " + (outs == 2 ? "two outputs" : "one output"),
        nodePlace(n));
  for (ValueId v : {n.inputs[0], n.outputs[0]})
    if (!body.value(v).type.rankKnown || !body.value(v).type.isStatic())
      return Status::error("value '" + body.value(v).name + "' has the dynamic shape " +
                               body.value(v).type.str() +
                               "; code generation needs static shapes for now",
                           nodePlace(n));
  // Every dtype: the definitions below compute in the compute types.
  return Status::ok();
}

std::vector<StmtRef> lowerScan(KernelBuilder& kb, const Node& n, const KernelBuilder::Sink& sink) {
  auto axis = axisOf(kb, n, int64_t(kb.shapeOf(n.inputs[0]).size()));
  if (!axis) return {};
  if (n.op == "CumSum") return lowerCumSum(kb, n, sink, *axis);
  if (n.op == "TopK") return lowerTopK(kb, n, sink, *axis);
  return lowerArg(kb, n, sink, *axis);
}

}  // namespace fuselens
