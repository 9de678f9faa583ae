// Decomposed LayerNorm, GELU and softmax: the forms exporters write for one op.
//
// When the constants are exactly the op's (Pow exponent 2, 1, 0.5, sqrt 2,
// 0.044715, sqrt(2/pi)) and the shapes fit the op's contract, the match
// carries a rewrite to that one op (LayerNormalization, opset 17; Gelu, opset
// 20; Softmax, opset 13), which fuse-patterns applies. Why rewrite rather than
// group: codegen then lowers one op it already knows (LayerNormalization and
// Softmax as one reduction stage each; Gelu as one elementwise expression)
// instead of a group with two reductions, which needs multi-anchor lowering;
// the kernel is the same or better, and the IR reads as the model meant.
// Otherwise (an eps that is not a constant, a gamma of another shape, 1.4142
// for sqrt 2) the match stays a group and says why it was not rewritten.
#include <cmath>
#include <cstdio>

#include "passes/pattern_match.h"
#include "passes/pattern_rows.h"
#include "passes/rewriter.h"

namespace fuselens::patterns {
namespace {

std::string num(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", x);
  return b;
}

std::string axesText(const std::vector<int64_t>& a) {
  std::string s = "[";
  for (size_t i = 0; i < a.size(); ++i) s += (i ? "," : "") + std::to_string(a[i]);
  return s + "]";
}

bool keepsDims(const Node& n) { return n.attrs.getInt("keepdims", 1) == 1; }

// The axes are the last ones of a rank-`rank` tensor, contiguous: what an
// `axis` attribute (axis .. rank-1) can say.
bool trailing(const std::vector<int64_t>& axes, int64_t rank) {
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] != rank - int64_t(axes.size()) + int64_t(i)) return false;
  return !axes.empty();
}

// `t` fits as LayerNorm scale/bias: exactly the normalized dims.
bool normalizedShape(const TensorType& t, const TensorType& x, size_t k) {
  if (!t.rankKnown || !x.rankKnown || t.rank() != k) return false;
  for (size_t i = 0; i < k; ++i)
    if (!t.shape[i].isStatic() || t.shape[i] != x.shape[x.rank() - k + i]) return false;
  return true;
}

// `t` broadcasts along the normalized dims only (a per-feature gamma or beta).
bool rowShaped(const TensorType& t, const TensorType& x, size_t k) {
  if (!t.rankKnown || !x.rankKnown || t.rank() > x.rank()) return false;
  for (size_t i = 0; i < t.rank(); ++i) {
    size_t xi = x.rank() - t.rank() + i;
    bool one = t.shape[i].isStatic() && t.shape[i].value == 1;
    if (!one && (xi < x.rank() - k || t.shape[i] != x.shape[xi])) return false;
  }
  return true;
}

// From `core` (the Erf or Tanh), the rest of 0.5 * x * (1 + core): Add(core, 1),
// then the product in any of its three orders. Returns the exit, or nullptr.
// Interior values may have other readers here: the driver rejects such a
// match with the reader named, rather than this matcher missing it silently.
const Node* geluTail(const Graph& g, ValueId x, const Node& core, std::vector<NodeId>& members) {
  const Node* add = userIs(g, core.outputs[0], "Add");
  if (!add || !isOnnxOp(*add, "Add") || !isExactly(g, otherOperand(*add, core.outputs[0]), 1.0))
    return nullptr;
  const Node* m1 = userIs(g, add->outputs[0], "Mul");
  if (!m1 || !isOnnxOp(*m1, "Mul")) return nullptr;
  ValueId o = otherOperand(*m1, add->outputs[0]);
  if (o == x || isExactly(g, o, 0.5)) {  // (x * t) * 0.5  or  (0.5 * t) * x
    const Node* m2 = userIs(g, m1->outputs[0], "Mul");
    if (!m2 || !isOnnxOp(*m2, "Mul")) return nullptr;
    ValueId o2 = otherOperand(*m2, m1->outputs[0]);
    if (!(o == x ? isExactly(g, o2, 0.5) : o2 == x)) return nullptr;
    members.insert(members.end(), {add->id, m1->id, m2->id});
    return m2;
  }
  const Node* half = producerIs(g, o, "Mul");  // (x * 0.5) * t
  if (!half || userIs(g, o, "Mul") != m1 || !isExactly(g, otherOperand(*half, x), 0.5))
    return nullptr;
  members.insert(members.end(), {half->id, add->id, m1->id});
  return m1;
}

// x^3 as Pow(x, 3) or x*x*x; returns its nodes, empty when `v` is not that.
std::vector<NodeId> cubeOf(const Graph& g, ValueId v, ValueId x) {
  if (const Node* p = producerIs(g, v, "Pow");
      p && p->inputs[0] == x && isExactly(g, p->inputs[1], 3.0))
    return {p->id};
  const Node* outer = producerIs(g, v, "Mul");
  if (!outer) return {};
  ValueId sq = otherOperand(*outer, x);
  const Node* inner = producerIs(g, sq, "Mul");
  if (inner && inner->inputs[0] == x && inner->inputs[1] == x) return {inner->id, outer->id};
  return {};
}

}  // namespace

// ReduceMean(x) -> Sub(x, mean) -> Pow(d, 2) -> ReduceMean -> Add(eps) -> Sqrt
//   -> Div(d, std) | Mul(d, Reciprocal(std)) -> [Mul(gamma)] -> [Add(beta)]
PatternOutcome layerNorm(const Graph& g, const Node& mean) {
  PatternOutcome out;
  if (!isOnnxOp(mean, "ReduceMean") || !keepsDims(mean)) return out;
  const ValueId x = mean.inputs[0];
  auto axes = reduceAxes(g, mean);
  const Node* sub = userIs(g, mean.outputs[0], "Sub");
  if (!axes || !sub || sub->inputs[0] != x || sub->inputs[1] != mean.outputs[0]) return out;
  const ValueId d = sub->outputs[0];
  const Node* sq = nullptr;
  bool squareIsExact = false;
  for (NodeId u : g.value(d).users) {
    const Node& n = g.node(u);
    if (isOnnxOp(n, "Pow") && n.inputs[0] == d)
      sq = &n, squareIsExact = isExactly(g, n.inputs[1], 2.0);
    if (isOnnxOp(n, "Mul") && n.inputs[0] == d && n.inputs[1] == d) sq = &n, squareIsExact = true;
  }
  if (!sq) return out;  // a centered tensor, not a LayerNorm
  const Node* var = soleUser(g, sq->outputs[0]);
  if (!var || !isOnnxOp(*var, "ReduceMean")) return out;
  if (!keepsDims(*var) || reduceAxes(g, *var) != axes) {
    auto va = reduceAxes(g, *var);
    out.misses.push_back(nearMiss(*sq, *var, sq->outputs[0],
                                  nodeLabel(*var) + " averages axes " + (va ? axesText(*va) : "?") +
                                      ", but the mean " + nodeLabel(mean) + " was over axes " +
                                      axesText(*axes) +
                                      "; a LayerNorm takes both statistics over the same rows"));
    return out;
  }
  const Node* addEps = soleUser(g, var->outputs[0]);
  ValueId epsV =
      addEps && isOnnxOp(*addEps, "Add") ? otherOperand(*addEps, var->outputs[0]) : ValueId();
  const Node* sqrtN = addEps ? soleUser(g, addEps->outputs[0]) : nullptr;
  if (!epsV.valid() || !sqrtN || !isOnnxOp(*sqrtN, "Sqrt")) {
    if (addEps)
      out.misses.push_back(nearMiss(*var, *addEps, var->outputs[0],
                                    "the variance " + nodeLabel(*var) + " goes to " +
                                        nodeLabel(*addEps) +
                                        ", not to Add(eps) -> Sqrt; no LayerNorm form matches"));
    return out;
  }
  const Node* norm = soleUser(g, sqrtN->outputs[0]);
  std::vector<NodeId> members = {mean.id, sub->id, sq->id, var->id, addEps->id, sqrtN->id};
  if (norm && isOnnxOp(*norm, "Reciprocal")) {
    members.push_back(norm->id);
    const Node* mul = soleUser(g, norm->outputs[0]);
    norm =
        mul && isOnnxOp(*mul, "Mul") && otherOperand(*mul, norm->outputs[0]) == d ? mul : nullptr;
  } else if (norm && !(isOnnxOp(*norm, "Div") && norm->inputs[0] == d &&
                       norm->inputs[1] == sqrtN->outputs[0])) {
    norm = nullptr;
  }
  if (!norm) {
    out.misses.push_back(nearMiss(
        *sqrtN,
        g.node(g.value(sqrtN->outputs[0]).users.empty() ? sqrtN->id
                                                        : g.value(sqrtN->outputs[0]).users[0]),
        sqrtN->outputs[0],
        "the standard deviation " + nodeLabel(*sqrtN) + " does not divide the centered " +
            nodeLabel(*sub) + "; no LayerNorm form matches"));
    return out;
  }
  members.push_back(norm->id);
  const TensorType& xt = g.value(x).type;
  const size_t k = axes->size();
  const Node* last = norm;
  ValueId gamma, beta;
  if (const Node* mul = soleUser(g, last->outputs[0]); mul && isOnnxOp(*mul, "Mul")) {
    ValueId o = otherOperand(*mul, last->outputs[0]);
    if (o.valid() && rowShaped(g.value(o).type, xt, k))
      gamma = o, last = mul, members.push_back(mul->id);
  }
  if (const Node* add = soleUser(g, last->outputs[0]); add && isOnnxOp(*add, "Add")) {
    ValueId o = otherOperand(*add, last->outputs[0]);
    if (o.valid() && rowShaped(g.value(o).type, xt, k))
      beta = o, last = add, members.push_back(add->id);
  }
  auto eps = scalarConstant(g, epsV);
  PatternMatch m;
  m.members = members;
  m.exit = last->id;
  m.multiAnchor = true;
  m.facts = "LayerNorm over axes " + axesText(*axes) + " of " + xt.str() + ": mean " +
            nodeLabel(mean) + ", variance " + nodeLabel(*var) + ", eps " +
            (eps ? num(*eps) : "%" + g.value(epsV).name) +
            (gamma.valid() ? ", gamma %" + g.value(gamma).name : "") +
            (beta.valid() ? ", beta %" + g.value(beta).name : "");
  const int64_t rank = int64_t(xt.rank());
  const bool floatX = xt.dtype == DType::F32 || xt.dtype == DType::F64;
  if (!eps)
    m.whyNoRewrite = "eps %" + g.value(epsV).name + " is not a scalar constant";
  else if (!squareIsExact)
    m.whyNoRewrite = "the square is Pow with an exponent other than exactly 2";
  else if (!trailing(*axes, rank))
    m.whyNoRewrite = "axes " + axesText(*axes) + " are not the last ones";
  else if (gamma.valid() && !normalizedShape(g.value(gamma).type, xt, k))
    m.whyNoRewrite = "gamma " + g.value(gamma).type.str() + " is not of the normalized shape";
  else if (beta.valid() && !normalizedShape(g.value(beta).type, xt, k))
    m.whyNoRewrite = "beta " + g.value(beta).type.str() + " is not of the normalized shape";
  else if (!gamma.valid() && !floatX)
    m.whyNoRewrite = "there is no gamma and a " + std::string(dtypeName(xt.dtype)) +
                     " scale of ones is not built here";
  if (!m.whyNoRewrite.empty()) {
    out.match = std::move(m);
    return out;
  }
  m.rewriteOp = "LayerNormalization";
  m.rewriteAttrs.set("axis", (*axes)[0] - rank);
  m.rewriteAttrs.set("epsilon", *eps);
  PatternOperand scale{gamma, nullptr, {}};
  if (!gamma.valid()) {
    std::vector<int64_t> shape;
    for (size_t i = 0; i < k; ++i) shape.push_back(xt.shape[xt.rank() - k + i].value);
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    if (!xt.isStatic()) {
      m.rewriteOp.clear();
      m.whyNoRewrite = "there is no gamma and the normalized dims are not static";
      out.match = std::move(m);
      return out;
    }
    scale = {ValueId(), floatTensor(xt.dtype, shape, std::vector<double>(size_t(n), 1.0)),
             mean.name + "_ones"};
  }
  m.rewriteInputs = {{x, nullptr, {}}, scale};
  if (beta.valid()) m.rewriteInputs.push_back({beta, nullptr, {}});
  out.match = std::move(m);
  return out;
}

// 0.5 * x * (1 + Erf(x / sqrt 2))  and  0.5 * x * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 x^3)))
PatternOutcome gelu(const Graph& g, const Node& core) {
  PatternOutcome out;
  const bool erf = isOnnxOp(core, "Erf");
  if (!erf && !isOnnxOp(core, "Tanh")) return out;
  std::vector<NodeId> members;
  ValueId x, c;
  double want = 0;
  std::string form;
  if (erf) {  // x / sqrt2  or  x * (1/sqrt2)
    const Node* s = producerIs(g, core.inputs[0], "Div");
    if (s)
      x = s->inputs[0], c = s->inputs[1], want = std::sqrt(2.0), form = "x / sqrt 2";
    else if ((s = producerIs(g, core.inputs[0], "Mul"))) {
      for (int side = 0; side < 2; ++side)
        if (scalarConstant(g, s->inputs[size_t(side)]))
          c = s->inputs[size_t(side)], x = s->inputs[size_t(1 - side)];
      want = 1 / std::sqrt(2.0), form = "x * (1/sqrt 2)";
    }
    if (!s || !x.valid() || userIs(g, s->outputs[0], "Erf") != &core) return out;
    members = {s->id, core.id};
  } else {  // sqrt(2/pi) * (x + 0.044715 * x^3)
    const Node* s = producerIs(g, core.inputs[0], "Mul");
    if (!s) return out;
    ValueId inner;
    for (int side = 0; side < 2; ++side)
      if (scalarConstant(g, s->inputs[size_t(side)]))
        c = s->inputs[size_t(side)], inner = s->inputs[size_t(1 - side)];
    const Node* add = producerIs(g, inner, "Add");
    if (!add) return out;
    for (int side = 0; side < 2 && !x.valid(); ++side) {
      const Node* k = producerIs(g, add->inputs[size_t(side)], "Mul");
      if (!k) continue;
      for (int ks = 0; ks < 2; ++ks) {
        ValueId cand = add->inputs[size_t(1 - side)];
        auto cube = cubeOf(g, k->inputs[size_t(1 - ks)], cand);
        if (!cube.empty() && isExactly(g, k->inputs[size_t(ks)], 0.044715)) {
          x = cand;
          members = cube;
          members.insert(members.end(), {k->id, add->id, s->id, core.id});
          break;
        }
      }
    }
    if (!x.valid()) return out;
    want = std::sqrt(2.0 / M_PI), form = "tanh form";
  }
  const Node* exit = geluTail(g, x, core, members);
  if (!exit) return out;
  auto value = scalarConstant(g, c);
  if (!value || std::fabs(*value - want) > 1e-3 * want) return out;  // another function
  PatternMatch m;
  m.members = members;
  m.exit = exit->id;
  m.facts = "GELU, " + form + ", of %" + g.value(x).name + " (" + nodeLabel(core) + " -> " +
            nodeLabel(*exit) + ")";
  if (!isExactly(g, c, want)) {
    m.whyNoRewrite =
        "its constant " + num(*value) + " is not " +
        (erf ? std::string(form == "x / sqrt 2" ? "sqrt 2" : "1/sqrt 2") : "sqrt(2/pi)") +
        " exactly, so Gelu would compute another function";
  } else {
    m.rewriteOp = "Gelu";
    m.rewriteAttrs.set("approximate", std::string(erf ? "none" : "tanh"));
    m.rewriteInputs = {{x, nullptr, {}}};
  }
  out.match = std::move(m);
  return out;
}

// ReduceMax(x) -> Sub(x, max) -> Exp -> ReduceSum -> Div(exp, sum)
PatternOutcome softmax(const Graph& g, const Node& mx) {
  PatternOutcome out;
  if (!isOnnxOp(mx, "ReduceMax") || !keepsDims(mx)) return out;
  const ValueId x = mx.inputs[0];
  auto axes = reduceAxes(g, mx);
  const Node* sub = userIs(g, mx.outputs[0], "Sub");
  if (!axes || !sub || sub->inputs[0] != x || sub->inputs[1] != mx.outputs[0]) return out;
  const Node* exp = soleUser(g, sub->outputs[0]);
  if (!exp || !isOnnxOp(*exp, "Exp")) return out;
  const ValueId e = exp->outputs[0];
  const Node* sum = userIs(g, e, "ReduceSum");
  if (!sum || sum->inputs[0] != e) return out;
  if (!keepsDims(*sum) || reduceAxes(g, *sum) != axes) {
    out.misses.push_back(nearMiss(*exp, *sum, e,
                                  nodeLabel(*sum) + " sums other axes than the maximum " +
                                      nodeLabel(mx) + " took (" + axesText(*axes) +
                                      "); a softmax normalizes the rows it took the maximum of"));
    return out;
  }
  const Node* div = soleUser(g, sum->outputs[0]);
  if (!div || !isOnnxOp(*div, "Div") || div->inputs[0] != e || div->inputs[1] != sum->outputs[0]) {
    if (div)
      out.misses.push_back(nearMiss(*sum, *div, sum->outputs[0],
                                    "the sum " + nodeLabel(*sum) + " goes to " + nodeLabel(*div) +
                                        ", not to Div(exp, sum); no softmax form matches"));
    return out;
  }
  PatternMatch m;
  m.members = {mx.id, sub->id, exp->id, sum->id, div->id};
  m.exit = div->id;
  m.multiAnchor = true;
  m.facts = "softmax over axes " + axesText(*axes) + " of " + g.value(x).type.str() + ": max " +
            nodeLabel(mx) + ", sum " + nodeLabel(*sum);
  if (axes->size() != 1) {
    m.whyNoRewrite =
        "it normalizes over " + std::to_string(axes->size()) + " axes; Softmax takes one";
  } else {
    m.rewriteOp = "Softmax";
    m.rewriteAttrs.set("axis", (*axes)[0] - int64_t(g.value(x).type.rank()));
    m.rewriteInputs = {{x, nullptr, {}}};
  }
  out.match = std::move(m);
  return out;
}

}  // namespace fuselens::patterns
