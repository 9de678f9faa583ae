// Compute definitions of the index-map family: Transpose, Reshape, Squeeze,
// Unsqueeze, Flatten, Identity, Slice; and of the other injective ops, Concat
// and constant Pad, whose value is a select over clamped reads.
// None of them computes anything; each maps an output position to the input
// position it reads, so inside a group they cost no memory traffic at all.
// Reshape keeps the flat row-major index, so it maps without any division.
#include <algorithm>
#include <numeric>
#include <optional>
#include <string>

#include "codegen/lower/compute.h"
#include "codegen/lower/compute_data.h"

namespace fuselens {
namespace {

// The Transpose permutation: the `perm` attribute, or the dims reversed (ONNX default).
std::optional<std::vector<int64_t>> transposePerm(const Node& n, size_t rank) {
  std::vector<int64_t> perm(rank);
  if (auto p = n.attrs.getInts("perm")) {
    perm = *p;
  } else {
    std::iota(perm.begin(), perm.end(), 0);
    std::reverse(perm.begin(), perm.end());
  }
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (size_t k = 0; k < sorted.size(); ++k)
    if (sorted[k] != int64_t(k)) return std::nullopt;
  if (perm.size() != rank) return std::nullopt;
  return perm;
}

ExprRef clampIndex(ExprRef i, int64_t hi) {
  return binary(BinOp::Max, intConst(0), binary(BinOp::Min, std::move(i), intConst(hi)));
}

// The input position that padded position p (may be outside [0, len)) reads in
// edge, reflect and wrap modes; `before` bounds how far below 0 p goes.
ExprRef borderIndex(const std::string& mode, ExprRef p, int64_t len, int64_t before) {
  if (mode == "edge" || len == 1) return clampIndex(std::move(p), len - 1);
  if (mode == "wrap") {  // shift by a multiple of len so the operand of % is >= 0
    int64_t shift = (std::max<int64_t>(before, 0) / len + 1) * len;
    return binary(BinOp::Mod, add(std::move(p), intConst(shift)), intConst(len));
  }
  // reflect (pads smaller than len, as ONNX requires): -p below, 2(len-1)-p above.
  ExprRef lo = select(compare(CmpOp::LT, p, intConst(0)), sub(intConst(0), p), p);
  ExprRef r =
      select(compare(CmpOp::GT, lo, intConst(len - 1)), sub(intConst(2 * (len - 1)), lo), lo);
  return clampIndex(r, len - 1);
}

}  // namespace

// Slice (opset 10+ inputs starts, ends, axes?, steps?, all constant): input
// position = start + out * step per sliced axis, with ONNX's clamping of start.
Index sliceSource(KernelBuilder& kb, const Node& n, const Index& out) {
  std::vector<int64_t> in = kb.shapeOf(n.inputs[0]);
  int64_t rank = int64_t(in.size());
  auto starts = constInts(kb, n, 1), ends = constInts(kb, n, 2);
  auto axes = constInts(kb, n, 3), steps = constInts(kb, n, 4);
  std::vector<ExprRef> d = out.dimExprs();
  if (!starts || !ends) {
    kb.fail(
        Status::error("Slice needs constant starts and ends for code generation", nodePlace(n)));
    return Index::ofDims(in, d);
  }
  for (size_t k = 0; k < starts->size(); ++k) {
    int64_t a = axes && k < axes->size() ? (*axes)[k] : int64_t(k);
    if (a < 0) a += rank;
    int64_t step = steps && k < steps->size() ? (*steps)[k] : 1;
    if (a < 0 || a >= rank || step == 0) {
      kb.fail(Status::error("Slice axis or step is invalid", nodePlace(n)));
      return Index::ofDims(in, d);
    }
    int64_t dim = in[size_t(a)], st = (*starts)[k];
    if (st < 0) st += dim;
    st = step > 0 ? std::clamp<int64_t>(st, 0, dim) : std::clamp<int64_t>(st, 0, dim - 1);
    d[size_t(a)] = add(intConst(st), mul(d[size_t(a)], intConst(step)));
  }
  return Index::ofDims(in, d);
}

ExprRef concatValue(KernelBuilder& kb, const Node& n, const Index& out) {
  int64_t rank = int64_t(out.shape.size());
  int64_t axis = n.attrs.getInt("axis", 0);
  if (axis < 0) axis += rank;
  std::vector<ExprRef> d = out.dimExprs();
  ExprRef pos = d[size_t(axis)];
  // Select from the last input back: reads are clamped into each input, so
  // every load stays in bounds whichever branch is taken.
  ExprRef value;
  int64_t offset = 0;
  std::vector<std::pair<int64_t, ValueId>> parts;
  for (ValueId v : n.inputs) {
    parts.emplace_back(offset, v);
    offset += kb.shapeOf(v)[size_t(axis)];
  }
  for (size_t i = parts.size(); i-- > 0;) {
    std::vector<int64_t> s = kb.shapeOf(parts[i].second);
    if (s[size_t(axis)] == 0) continue;
    std::vector<ExprRef> di = d;
    di[size_t(axis)] = parts.size() == 1
                           ? sub(pos, intConst(parts[i].first))
                           : clampIndex(sub(pos, intConst(parts[i].first)), s[size_t(axis)] - 1);
    ExprRef v = kb.valueAt(parts[i].second, Index::ofDims(s, di));
    value = value ? select(compare(CmpOp::LT, pos, intConst(parts[i].first + s[size_t(axis)])), v,
                           value)
                  : v;
  }
  return value ? value : floatConst(0);
}

// Pad, constant mode (pads and the value as constant inputs, or the opset-2
// attributes): out-of-range positions take the value; reads are clamped.
ExprRef padValue(KernelBuilder& kb, const Node& n, const Index& out) {
  std::vector<int64_t> in = kb.shapeOf(n.inputs[0]);
  int64_t rank = int64_t(in.size());
  std::string mode = n.attrs.getString("mode", "constant");
  if (mode != "constant" && mode != "edge" && mode != "reflect" && mode != "wrap") {
    kb.fail(Status::error("Pad mode '" + mode + "' has no code generation", nodePlace(n)));
    return floatConst(0);
  }
  auto pads = constInts(kb, n, 1);
  if (!pads) pads = n.attrs.getInts("pads");
  std::vector<int64_t> axes(static_cast<size_t>(rank), 0);
  std::iota(axes.begin(), axes.end(), 0);
  if (auto a = constInts(kb, n, 3)) axes = *a;
  if (!pads || pads->size() != 2 * axes.size()) {
    kb.fail(Status::error("Pad needs constant pads, two per padded axis", nodePlace(n)));
    return floatConst(0);
  }
  double fill = n.attrs.getFloat("value", 0.0);
  if (n.inputs.size() > 2 && n.inputs[2].valid()) {
    auto c = kb.constantOf(n.inputs[2]);
    if (!c || c->numel() != 1) {
      kb.fail(Status::error("Pad needs a constant fill value", nodePlace(n)));
      return floatConst(0);
    }
    fill = c->at(0);
  }
  std::vector<ExprRef> d = out.dimExprs(), di = d;
  ExprRef inside;
  for (size_t k = 0; k < axes.size(); ++k) {
    int64_t a = axes[k] < 0 ? axes[k] + rank : axes[k];
    int64_t before = (*pads)[k];
    ExprRef p = sub(d[size_t(a)], intConst(before));
    if (mode != "constant") {  // every position reads the input: no select
      di[size_t(a)] = borderIndex(mode, p, in[size_t(a)], before);
      continue;
    }
    ExprRef ok = nullptr;
    if (before > 0) ok = compare(CmpOp::GE, p, intConst(0));
    if ((*pads)[k + axes.size()] > 0 || before < 0) {
      ExprRef hi = compare(CmpOp::LT, p, intConst(in[size_t(a)]));
      ok = ok ? select(ok, hi, ok) : hi;
    }
    di[size_t(a)] = ok ? clampIndex(p, in[size_t(a)] - 1) : p;
    if (ok) inside = inside ? select(inside, ok, inside) : ok;
  }
  ExprRef v = kb.valueAt(n.inputs[0], Index::ofDims(in, di));
  if (!inside) return v;
  ExprRef f = v->type == DType::Bool                           ? boolConst(fill != 0)
              : v->type == DType::F32 || v->type == DType::F64 ? floatConst(fill, v->type)
                                                               : intConst(int64_t(fill));
  return select(inside, v, f);
}

Index identitySource(KernelBuilder&, const Node&, const Index& out) { return out; }

// Reshape-like ops keep the row-major order: the flat index maps through.
Index flatSource(KernelBuilder& kb, const Node& n, const Index& out) {
  return Index::ofFlat(kb.shapeOf(n.inputs[0]), out.flatExpr());
}

// Transpose: output dim k is input dim perm[k].
Index transposeSource(KernelBuilder& kb, const Node& n, const Index& out) {
  std::vector<int64_t> inShape = kb.shapeOf(n.inputs[0]);
  auto perm = transposePerm(n, inShape.size());
  if (!perm) {
    kb.fail(Status::error(
        "perm must be a permutation of 0.." + std::to_string(inShape.size()) + "-1", nodePlace(n)));
    return Index::ofFlat(inShape, intConst(0));
  }
  std::vector<ExprRef> outDims = out.dimExprs();
  std::vector<ExprRef> inDims(inShape.size());
  for (size_t k = 0; k < perm->size(); ++k) inDims[(*perm)[k]] = outDims[k];
  return Index::ofDims(inShape, std::move(inDims));
}

}  // namespace fuselens
