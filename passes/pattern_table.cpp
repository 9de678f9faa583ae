// The rows of fuse-patterns and the anchored patterns' matchers: a MatMul/Gemm
// or Conv with what follows it, scaled dot-product attention, SiLU. Each
// matcher walks from its root along single-user values; where the walk stops
// on a fact that a user could change (an extra reader, the wrong axis), it
// reports a near miss on that edge instead of silently matching less.
#include <cstdio>
#include <set>

#include "passes/pattern_match.h"
#include "passes/pattern_rows.h"

namespace fuselens {
namespace patterns {
namespace {

// Activations codegen lowers as an epilogue (plus SiLU's Sigmoid/Mul pair).
bool isActivation(const Node& n) {
  static const std::set<std::string> ops = {"Relu", "Gelu", "Sigmoid", "Tanh", "LeakyRelu", "Clip"};
  return n.domain.empty() && ops.count(n.op) != 0;
}

std::string ref(const Graph& g, ValueId v) { return "%" + g.value(v).name; }

std::string usersText(const Graph& g, ValueId v) {
  std::string s;
  for (NodeId u : g.value(v).users) s += (s.empty() ? "" : ", ") + nodeLabel(g.node(u));
  if (g.isGraphOutput(v)) s += (s.empty() ? "" : ", ") + std::string("a graph output");
  return s;
}

// b is a bias of `out`: one value per output column, broadcast over the rows.
bool isRowBias(const Graph& g, ValueId b, const TensorType& out) {
  const TensorType& t = g.value(b).type;
  if (!t.rankKnown || !out.rankKnown || t.rank() == 0 || t.rank() > out.rank()) return false;
  for (size_t i = 0; i + 1 < t.rank(); ++i)
    if (!(t.shape[i].isStatic() && t.shape[i].value == 1)) return false;
  return t.shape.back() == out.shape.back();
}

// SiLU reading `x`: Sigmoid(x) whose one user is Mul(x, sigmoid); nullptr if not.
const Node* siluMul(const Graph& g, ValueId x, const Node*& sigmoid) {
  sigmoid = userIs(g, x, "Sigmoid");
  if (!sigmoid || sigmoid->inputs[0] != x) return nullptr;
  const Node* mul = soleUser(g, sigmoid->outputs[0]);
  if (!mul || !isOnnxOp(*mul, "Mul") || otherOperand(*mul, sigmoid->outputs[0]) != x)
    return nullptr;
  return mul;
}

// Extends `m` past `last` with an activation reading its result, if one does.
void takeActivation(const Graph& g, const Node& last, PatternMatch& m, PatternOutcome& out) {
  ValueId cur = last.outputs[0];
  const Node* sig = nullptr;
  if (const Node* mul = siluMul(g, cur, sig)) {
    if (g.value(cur).users.size() == 2 && !g.isGraphOutput(cur)) {
      m.members.insert(m.members.end(), {sig->id, mul->id});
      m.exit = mul->id;
      m.facts += " -> SiLU (" + nodeLabel(*sig) + ", " + nodeLabel(*mul) + ")";
      return;
    }
  }
  if (const Node* act = soleUser(g, cur); act && isActivation(*act)) {
    m.members.push_back(act->id);
    m.exit = act->id;
    m.facts += " -> " + nodeLabel(*act);
    return;
  }
  for (NodeId u : g.value(cur).users)
    if (isActivation(g.node(u)))
      out.misses.push_back(nearMiss(
          last, g.node(u), cur,
          ref(g, cur) + " of " + nodeLabel(last) + " is also read by " + usersText(g, cur) +
              ", so the activation " + nodeLabel(g.node(u)) +
              " does not join: the group would have to store " + ref(g, cur) + " as well"));
}

}  // namespace

NearMiss nearMiss(const Node& producer, const Node& consumer, ValueId edge, std::string sentence,
                  std::string hint) {
  return NearMiss{producer.id, consumer.id, edge, std::move(sentence), std::move(hint)};
}

// MatMul|Gemm -> Add(bias over the rows) -> [activation]
PatternOutcome matmulBiasAct(const Graph& g, const Node& root) {
  PatternOutcome out;
  const bool gemm = isOnnxOp(root, "Gemm");
  if ((!gemm && !isOnnxOp(root, "MatMul")) || root.outputs.size() != 1) return out;
  PatternMatch m;
  m.members = {root.id};
  m.exit = root.id;
  m.facts = nodeLabel(root);
  const Node* last = &root;
  ValueId cur = root.outputs[0];
  if (const Node* add = soleUser(g, cur); add && isOnnxOp(*add, "Add")) {
    ValueId b = otherOperand(*add, cur);
    if (b.valid() && isRowBias(g, b, g.value(cur).type)) {
      m.members.push_back(add->id);
      m.exit = add->id;
      m.facts +=
          " -> " + nodeLabel(*add) + " (bias " + ref(g, b) + ": " + g.value(b).type.str() + ")";
      last = add;
    }
  } else if (const Node* add2 = userIs(g, cur, "Add"); add2 && g.value(cur).users.size() > 1) {
    ValueId b = otherOperand(*add2, cur);
    if (b.valid() && isRowBias(g, b, g.value(cur).type))
      out.misses.push_back(
          nearMiss(root, *add2, cur,
                   ref(g, cur) + " of " + nodeLabel(root) + " is also read by " +
                       usersText(g, cur) + ", so the bias " + nodeLabel(*add2) +
                       " does not join: the group would have to store the product too"));
  }
  takeActivation(g, *last, m, out);
  if (m.members.size() < 2)
    return out;  // a lone MatMul, or a Gemm with its own bias: one op, no group
  out.match = std::move(m);
  return out;
}

// Conv -> [BatchNormalization] -> [activation]   (simplify folds constant BN first)
PatternOutcome convBnAct(const Graph& g, const Node& root) {
  PatternOutcome out;
  if (!isOnnxOp(root, "Conv") || root.outputs.size() != 1) return out;
  PatternMatch m;
  m.members = {root.id};
  m.exit = root.id;
  m.facts = nodeLabel(root);
  const Node* last = &root;
  if (const Node* bn = soleUser(g, root.outputs[0]);
      bn && isOnnxOp(*bn, "BatchNormalization") && bn->inputs[0] == root.outputs[0]) {
    bool extra = false;  // training outputs (running mean/var) read by someone
    for (size_t i = 1; i < bn->outputs.size(); ++i)
      extra = extra || !g.value(bn->outputs[i]).users.empty() || g.isGraphOutput(bn->outputs[i]);
    if (!extra) {
      m.members.push_back(bn->id);
      m.exit = bn->id;
      m.facts += " -> " + nodeLabel(*bn) +
                 " (its scale/shift is not constant, so simplify could not fold it)";
      last = bn;
    }
  }
  takeActivation(g, *last, m, out);
  if (m.members.size() < 2) return out;  // a lone Conv is no pattern
  out.match = std::move(m);
  return out;
}

// Sigmoid(x) -> Mul(x, .)
PatternOutcome silu(const Graph& g, const Node& root) {
  PatternOutcome out;
  if (!isOnnxOp(root, "Sigmoid")) return out;
  const Node* sig = nullptr;
  const Node* mul = siluMul(g, root.inputs[0], sig);
  if (!mul || sig != &root) return out;
  PatternMatch m;
  m.members = {root.id, mul->id};
  m.exit = mul->id;
  m.facts = "x * Sigmoid(x): " + nodeLabel(root) + " -> " + nodeLabel(*mul);
  out.match = std::move(m);
  return out;
}

// MatMul(Q, [Transpose] K) -> Div|Mul(scalar) -> [Add(mask)] -> Softmax(last) -> MatMul(., V)
PatternOutcome attention(const Graph& g, const Node& sm) {
  PatternOutcome out;
  if (!isOnnxOp(sm, "Softmax") || sm.inputs.empty()) return out;
  // Backwards from the Softmax: [mask Add], the scale, the scores MatMul.
  const Node* maskAdd = producerIs(g, sm.inputs[0], "Add");
  const Node *scale = nullptr, *qk = nullptr;
  auto scaleOf = [&](ValueId v) -> const Node* {
    for (const char* op : {"Div", "Mul"})
      if (const Node* s = producerIs(g, v, op)) return s;
    return nullptr;
  };
  auto scoresOf = [&](const Node* s) -> const Node* {
    for (ValueId in : s->inputs)
      if (const Node* mm = producerIs(g, in, "MatMul")) return mm;
    return nullptr;
  };
  ValueId mask;
  if (maskAdd) {
    for (int side = 0; side < 2 && !qk; ++side) {
      const Node* s = scaleOf(maskAdd->inputs[size_t(side)]);
      if (s && scoresOf(s))
        scale = s, qk = scoresOf(s), mask = maskAdd->inputs[size_t(1 - side)];
      else if (const Node* mm = producerIs(g, maskAdd->inputs[size_t(side)], "MatMul"))
        qk = mm, mask = maskAdd->inputs[size_t(1 - side)];
    }
  } else if ((scale = scaleOf(sm.inputs[0]))) {
    qk = scoresOf(scale);
  } else {
    qk = producerIs(g, sm.inputs[0], "MatMul");
  }
  const Node* ctx = userIs(g, sm.outputs[0], "MatMul");
  if (!qk || !ctx || ctx->inputs[0] != sm.outputs[0]) return out;  // not attention-shaped

  const Node& intoSoftmax = maskAdd ? *maskAdd : scale ? *scale : *qk;
  const TensorType& st = g.value(sm.inputs[0]).type;
  int64_t rank = int64_t(st.rank()), axis = sm.attrs.getInt("axis", -1);
  if (!st.rankKnown || (axis < 0 ? axis + rank : axis) != rank - 1) {
    out.misses.push_back(
        nearMiss(intoSoftmax, sm, sm.inputs[0],
                 nodeLabel(sm) + " normalizes axis " + std::to_string(axis) + " of " + st.str() +
                     ", not the last axis; attention normalizes each query's scores over "
                     "the keys, the last axis"));
    return out;
  }
  if (!scale) {
    const Node& after = maskAdd ? *maskAdd : sm;
    out.misses.push_back(
        nearMiss(*qk, after, qk->outputs[0],
                 nodeLabel(*qk) + " feeds " + nodeLabel(after) +
                     " without a scale; pattern-attention needs the scores divided "
                     "(or multiplied) by a scalar constant, 1/sqrt(d) or sqrt(d)"));
    return out;
  }
  ValueId factor = otherOperand(*scale, qk->outputs[0]);
  bool divides = isOnnxOp(*scale, "Div");
  auto c = scalarConstant(g, factor);
  if (!c || (divides && scale->inputs[0] != qk->outputs[0])) {
    out.misses.push_back(
        nearMiss(*qk, *scale, qk->outputs[0],
                 nodeLabel(*scale) + " scales the scores of " + nodeLabel(*qk) + " by " +
                     (factor.valid() ? ref(g, factor) : std::string("itself")) +
                     ", which is not a scalar constant; the attention pattern needs a "
                     "constant scale",
                 "if the scale is computed from constants, run const-fold before fuse-patterns"));
    return out;
  }
  PatternMatch m;
  m.multiAnchor = true;
  const Node* kt = producerIs(g, qk->inputs[1], "Transpose");
  if (kt && soleUser(g, kt->outputs[0]) == qk) m.members.push_back(kt->id);
  m.members.insert(m.members.end(), {qk->id, scale->id});
  if (maskAdd) m.members.push_back(maskAdd->id);
  m.members.insert(m.members.end(), {sm.id, ctx->id});
  m.exit = ctx->id;
  char num[32];
  std::snprintf(num, sizeof num, "%g", *c);
  m.facts =
      std::string(kt && m.members[0] == kt->id ? nodeLabel(*kt) + " (K^T) -> " : "") + "scores " +
      nodeLabel(*qk) + " -> " + (divides ? "Div by " : "Mul by ") + num +
      (maskAdd ? " -> mask " + ref(g, mask) + " " + g.value(mask).type.str() : std::string()) +
      " -> Softmax over the last axis -> context " + nodeLabel(*ctx);
  out.match = std::move(m);
  return out;
}

}  // namespace patterns

const std::vector<PatternRow>& patternTable() {
  using namespace patterns;
  static const std::vector<PatternRow> rows = {
      // MatMul(Q, K^T) -> Div|Mul(c) -> [Add(mask)] -> Softmax(last axis) -> MatMul(V)
      {FusionRule::PatternAttention,
       "MatMul(Q, K^T) -> Div|Mul(scalar) -> [Add(mask)] -> Softmax(last) -> MatMul(V)", attention},
      // ReduceMax -> Sub -> Exp -> ReduceSum -> Div  ==  Softmax(axis)
      {FusionRule::PatternSoftmax, "ReduceMax -> Sub -> Exp -> ReduceSum -> Div", softmax},
      // mean, x-mean, var, (var+eps)^0.5, divide, [*gamma], [+beta]  ==  LayerNormalization
      {FusionRule::PatternLayerNorm,
       "ReduceMean -> Sub -> Pow 2 -> ReduceMean -> Add eps -> Sqrt -> Div -> [Mul] -> [Add]",
       layerNorm},
      // Conv -> [BatchNormalization] -> [activation]
      {FusionRule::PatternConvBnAct, "Conv -> [BatchNormalization] -> [activation]", convBnAct},
      // MatMul|Gemm -> Add(bias) -> [activation]
      {FusionRule::PatternMatMulBiasAct, "MatMul|Gemm -> Add(bias) -> [activation]", matmulBiasAct},
      // 0.5 * x * (1 + erf(x / sqrt 2)), or its tanh form  ==  Gelu
      {FusionRule::PatternGelu, "x * 0.5 * (1 + Erf(x / sqrt 2)) | tanh form", gelu},
      // x * Sigmoid(x)
      {FusionRule::PatternSilu, "x * Sigmoid(x)", silu},
  };
  return rows;
}

}  // namespace fuselens
