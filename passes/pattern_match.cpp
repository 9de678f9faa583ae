#include "passes/pattern_match.h"

#include <algorithm>
#include <cmath>

#include "passes/rewriter.h"

namespace fuselens {

std::string nodeLabel(const Node& n) { return n.op + " '" + n.name + "'"; }

bool isOnnxOp(const Node& n, const char* op) { return n.domain.empty() && n.op == op; }

const Node* producerIs(const Graph& g, ValueId v, const char* op) {
  if (!v.valid() || !g.value(v).producer.valid()) return nullptr;
  const Node& p = g.node(g.value(v).producer);
  return isOnnxOp(p, op) ? &p : nullptr;
}

const Node* soleUser(const Graph& g, ValueId v) {
  if (!v.valid() || g.isGraphOutput(v) || g.value(v).users.size() != 1) return nullptr;
  return &g.node(g.value(v).users[0]);
}

const Node* userIs(const Graph& g, ValueId v, const char* op) {
  const Node* found = nullptr;
  for (NodeId u : g.value(v).users)
    if (isOnnxOp(g.node(u), op)) {
      if (found) return nullptr;
      found = &g.node(u);
    }
  return found;
}

std::optional<double> scalarConstant(const Graph& g, ValueId v) {
  const TensorData* t = v.valid() ? constantOf(g, v) : nullptr;
  if (!t || t->numel() != 1) return {};
  return t->at(0);
}

bool isExactly(const Graph& g, ValueId v, double x) {
  const TensorData* t = v.valid() ? constantOf(g, v) : nullptr;
  if (!t || t->numel() != 1) return false;
  if (t->dtype == DType::F32) return float(t->at(0)) == float(x);
  if (t->dtype == DType::F64) return t->at(0) == x;
  return false;  // f16/bf16/ints: not the exact constant of a f32/f64 formula
}

ValueId otherOperand(const Node& n, ValueId v) {
  if (n.inputs.size() != 2) return {};
  if (n.inputs[0] == v && n.inputs[1] != v) return n.inputs[1];
  if (n.inputs[1] == v && n.inputs[0] != v) return n.inputs[0];
  return {};
}

std::string ReducedRows::str() const {
  std::string s = shape + " over axis";
  if (axes.size() > 1) s += "es";
  for (size_t i = 0; i < axes.size(); ++i) s += (i ? "," : " ") + std::to_string(axes[i]);
  return s;
}

std::optional<std::vector<int64_t>> reduceAxes(const Graph& g, const Node& n) {
  if (n.inputs.empty() || !n.inputs[0].valid() || !g.value(n.inputs[0]).type.rankKnown) return {};
  const int64_t rank = int64_t(g.value(n.inputs[0]).type.rank());
  std::optional<std::vector<int64_t>> axes = n.attrs.getInts("axes");
  if (!axes && n.inputs.size() > 1 && n.inputs[1].valid()) {
    const TensorData* t = constantOf(g, n.inputs[1]);
    if (!t) return {};
    axes = std::vector<int64_t>();
    for (int64_t i = 0; i < t->numel(); ++i) axes->push_back(int64_t(t->at(i)));
  }
  std::vector<int64_t> out;
  if (!axes || axes->empty()) {
    if (n.attrs.getInt("noop_with_empty_axes", 0) != 0) return {};
    for (int64_t i = 0; i < rank; ++i) out.push_back(i);
    return out;
  }
  for (int64_t a : *axes) {
    if (a < -rank || a >= rank) return {};
    out.push_back(a < 0 ? a + rank : a);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::optional<ReducedRows> reducedRows(const Graph& g, const Node& n) {
  if (!n.domain.empty() || n.inputs.empty() || !n.inputs[0].valid()) return {};
  const TensorType& t = g.value(n.inputs[0]).type;
  if (!t.rankKnown) return {};
  const int64_t rank = int64_t(t.rank());
  ReducedRows r{t.str(), {}};
  if (n.op.rfind("Reduce", 0) == 0) {
    auto axes = reduceAxes(g, n);
    if (!axes) return {};
    r.axes = *axes;
  } else if (n.op == "Softmax" || n.op == "LogSoftmax") {
    int64_t a = n.attrs.getInt("axis", -1);
    if (a < -rank || a >= rank) return {};
    r.axes = {a < 0 ? a + rank : a};
  } else if (n.op == "LayerNormalization") {
    int64_t a = n.attrs.getInt("axis", -1);
    if (a < -rank || a >= rank) return {};
    for (int64_t i = a < 0 ? a + rank : a; i < rank; ++i) r.axes.push_back(i);
  } else {
    return {};
  }
  return r;
}

bool isPatternGroup(const Node& n) {
  return n.op == kFusedOp && n.domain == kFuseLensDomain && n.body &&
         n.attrs.getString("kind", "").rfind("pattern-", 0) == 0;
}

}  // namespace fuselens
