// Shape tensors as dim expressions (see shape_values.h): what Shape, Gather,
// Slice, Unsqueeze/Squeeze, Concat, Cast and integer arithmetic compute from
// known pieces, and the Reshape/Expand/ConstantOfShape output dims that follow.
#include "core/ops/shape_values.h"

#include <algorithm>

#include "core/ops/op_util.h"

namespace fuselens::ops {
namespace {

constexpr int64_t kMaxEntries = 16;  // shape tensors are short; others are data

bool isIntType(DType t) { return t == DType::I64 || t == DType::I32; }

bool anySymbolic(const std::vector<std::optional<DimExpr>>& c) {
  for (const auto& e : c)
    if (e && !e->isConstant()) return true;
  return false;
}

// Integer arithmetic on two entries, as ONNX's Add/Sub/Mul/Div on shapes.
std::optional<DimExpr> combine(const std::string& op, const DimExpr& a, const DimExpr& b) {
  if (op == "Add") return add(a, b);
  if (op == "Sub") return subtract(a, b);
  if (op == "Mul") return multiply(a, b);
  // Div truncates; shape entries are non-negative, where that is floor.
  if (b.isConstant() && b.constantPart() > 0) return floorDiv(a, b.constantPart());
  return divideExact(a, b);
}

// A Reshape target entry as the dim it gives: 0 copies the input dim.
Dim targetDim(const std::optional<DimExpr>& e, const std::vector<Dim>& in, size_t i,
              bool allowzero) {
  if (!e) return Dim::unknown();
  if (!e->isConstant()) return e->toDim();
  const int64_t c = e->constantPart();
  if (c == 0 && !allowzero) return i < in.size() ? in[i] : Dim::unknown();
  return c >= 0 ? Dim::fixed(c) : Dim::unknown();
}

Dim product(const std::vector<Dim>& dims, size_t skip) {
  Dim p = Dim::fixed(1);
  for (size_t i = 0; i < dims.size(); ++i)
    if (i != skip) p = dimMul(p, dims[i]);
  return p;
}

// Fills the dims inference left unknown (or the whole shape, rank unknown).
void sharpen(Graph& g, ValueId v, const std::vector<Dim>& dims) {
  TensorType& t = g.mutableValue(v).type;
  if (!t.rankKnown) {
    t.rankKnown = true;
    t.shape = dims;
    return;
  }
  if (t.rank() != dims.size()) return;
  for (size_t i = 0; i < dims.size(); ++i)
    if (!t.shape[i].isStatic() && t.shape[i].symbol.empty()) t.shape[i] = dims[i];
}

}  // namespace

std::optional<ShapeValues::Contents> ShapeValues::contentsOf(const Graph& g, ValueId v) const {
  if (!v.valid()) return std::nullopt;
  if (auto it = contents_.find(v.index); it != contents_.end()) return it->second;
  const Value& val = g.value(v);
  if (!val.constant || !isIntType(val.constant->dtype) || val.constant->rank() > 1 ||
      val.constant->numel() > kMaxEntries)
    return std::nullopt;
  Contents c;
  for (int64_t i = 0; i < val.constant->numel(); ++i)
    c.push_back(DimExpr::constant(loadI(*val.constant, i)));
  return c;
}

std::optional<ShapeValues::Contents> ShapeValues::compute(const Graph& g, const Node& n) const {
  const std::string& op = n.op;
  if (op == "Shape") {
    const TensorType& x = g.value(n.inputs[0]).type;
    if (!x.rankKnown) return std::nullopt;
    const int64_t r = int64_t(x.rank());
    auto clampTo = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + r : v, 0, r); };
    Contents c;
    for (int64_t i = clampTo(n.attrs.getInt("start", 0)); i < clampTo(n.attrs.getInt("end", r));
         ++i)
      c.push_back(DimExpr::of(x.shape[i]));
    return c;
  }
  auto first = contentsOf(g, n.inputs[0]);
  if (!first) return std::nullopt;
  if (op == "Identity" || op == "Unsqueeze" || op == "Squeeze" ||
      (op == "Cast" && isIntType(g.value(n.outputs[0]).type.dtype)))
    return first;
  if (op == "Gather" && n.attrs.getInt("axis", 0) == 0 && n.inputs.size() == 2) {
    auto idx = contentsOf(g, n.inputs[1]);
    if (!idx) return std::nullopt;
    Contents c;
    for (const auto& e : *idx) {
      if (!e || !e->isConstant()) return std::nullopt;
      auto i = normalizeAxis(e->constantPart(), int64_t(first->size()));
      if (!i) return std::nullopt;
      c.push_back((*first)[*i]);
    }
    return c;
  }
  if (op == "Concat") {
    Contents c;
    for (ValueId in : n.inputs) {
      auto part = contentsOf(g, in);
      if (!part || c.size() + part->size() > size_t(kMaxEntries)) return std::nullopt;
      c.insert(c.end(), part->begin(), part->end());
    }
    return c;
  }
  if (op == "Slice" && n.inputs.size() >= 3 && n.inputs.size() <= 4) {
    auto starts = contentsOf(g, n.inputs[1]), ends = contentsOf(g, n.inputs[2]);
    if (!starts || !ends || starts->size() != 1 || ends->size() != 1 || !(*starts)[0] ||
        !(*ends)[0] || !(*starts)[0]->isConstant() || !(*ends)[0]->isConstant())
      return std::nullopt;
    const int64_t len = int64_t(first->size());
    auto at = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + len : v, 0, len); };
    const int64_t s = at((*starts)[0]->constantPart()), e = at((*ends)[0]->constantPart());
    return Contents(first->begin() + s, first->begin() + std::max(s, e));
  }
  if ((op == "Add" || op == "Sub" || op == "Mul" || op == "Div") && n.inputs.size() == 2) {
    auto second = contentsOf(g, n.inputs[1]);
    if (!second || (first->size() != second->size() && first->size() != 1 && second->size() != 1))
      return std::nullopt;
    Contents c;
    for (size_t i = 0; i < std::max(first->size(), second->size()); ++i) {
      const auto& a = (*first)[first->size() == 1 ? 0 : i];
      const auto& b = (*second)[second->size() == 1 ? 0 : i];
      c.push_back(a && b ? combine(op, *a, *b) : std::nullopt);
    }
    return c;
  }
  return std::nullopt;
}

void ShapeValues::refine(Graph& g, const Node& n) const {
  const bool reshape = n.op == "Reshape", expand = n.op == "Expand";
  const size_t at = reshape || expand ? 1 : n.op == "ConstantOfShape" ? 0 : n.inputs.size();
  if (at >= n.inputs.size() || n.outputs.empty()) return;
  auto target = contentsOf(g, n.inputs[at]);
  if (!target || !anySymbolic(*target)) return;
  if (n.op == "ConstantOfShape") {
    std::vector<Dim> dims;
    for (const auto& e : *target) dims.push_back(e ? e->toDim() : Dim::unknown());
    return sharpen(g, n.outputs[0], dims);
  }
  const TensorType& x = g.value(n.inputs[0]).type;
  if (!x.rankKnown) return;
  std::vector<Dim> dims;
  if (reshape) {
    const bool allowzero = n.attrs.getInt("allowzero", 0) != 0;
    size_t neg = target->size();
    for (size_t i = 0; i < target->size(); ++i) {
      const auto& e = (*target)[i];
      if (e && e->isConstant() && e->constantPart() == -1) neg = i;
      dims.push_back(targetDim(e, x.shape, i, allowzero));
    }
    // -1 is numel(x) / numel(the rest) when the algebra divides exactly.
    if (neg < dims.size()) dims[neg] = dimDivExact(product(x.shape, x.rank()), product(dims, neg));
  } else {  // Expand: the target broadcast against x, right-aligned
    const size_t r = std::max(x.rank(), target->size());
    for (size_t i = 0; i < r; ++i) {
      const size_t xi = i + x.rank() - r, ti = i + target->size() - r;
      const Dim a = i + x.rank() >= r ? x.shape[xi] : Dim::fixed(1);
      const Dim b = i + target->size() >= r && (*target)[ti] ? (*target)[ti]->toDim()
                    : i + target->size() >= r                ? Dim::unknown()
                                                             : Dim::fixed(1);
      dims.push_back(a == Dim::fixed(1) ? b : b == Dim::fixed(1) || a == b ? a : Dim::unknown());
    }
  }
  sharpen(g, n.outputs[0], dims);
}

void ShapeValues::visit(Graph& g, NodeId id) {
  const Node& n = g.node(id);
  if (!n.domain.empty() || n.inputs.empty() || n.outputs.empty() || !n.inputs[0].valid() ||
      !n.outputs[0].valid())
    return;
  refine(g, n);
  const TensorType& out = g.value(n.outputs[0]).type;
  if (!isIntType(out.dtype) || !out.rankKnown || out.rank() > 1) return;
  if (auto c = compute(g, n); c && c->size() <= size_t(kMaxEntries))
    contents_[n.outputs[0].index] = std::move(*c);
}

}  // namespace fuselens::ops
