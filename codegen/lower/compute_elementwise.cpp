// Operand indexing of the elementwise family: ONNX multidirectional
// broadcasting, and the per-axis or blocked scale / zero point of
// QuantizeLinear and DequantizeLinear, with the shape checks they need. The
// expressions themselves are the rows of elementwise_rows.cpp. Each operand is
// indexed, then combined, which is what lets lowering inline a whole chain
// into one loop nest or into a MatMul's epilogue.
#include "codegen/lower/compute.h"

namespace fuselens {

bool broadcastsTo(const std::vector<int64_t>& in, const std::vector<int64_t>& out) {
  if (in.size() > out.size()) return false;
  size_t lead = out.size() - in.size();
  for (size_t k = 0; k < in.size(); ++k)
    if (in[k] != 1 && in[k] != out[lead + k]) return false;
  return true;
}

Index broadcastIndex(const Index& out, const std::vector<int64_t>& inShape) {
  // Same shape: keep whatever form the index has (a flat index stays flat).
  if (inShape == out.shape) return out;
  std::vector<ExprRef> outDims = out.dimExprs();
  size_t lead = out.shape.size() - inShape.size();
  std::vector<ExprRef> dims;
  for (size_t k = 0; k < inShape.size(); ++k)
    dims.push_back(inShape[k] == 1 ? intConst(0) : outDims[lead + k]);
  return Index::ofDims(inShape, std::move(dims));
}

namespace {

bool isQuantOp(const Node& n) { return n.op == "QuantizeLinear" || n.op == "DequantizeLinear"; }

}  // namespace

Index elementwiseOperandIndex(KernelBuilder& kb, const Node& n, size_t input, const Index& out) {
  std::vector<int64_t> inShape = kb.shapeOf(n.inputs[input]);
  if (isQuantOp(n) && input > 0) {
    int64_t axis = n.attrs.getInt("axis", 1);
    if (axis < 0) axis += int64_t(out.shape.size());
    bool axisOk = axis >= 0 && axis < int64_t(out.shape.size());
    // A per-axis scale / zero point: a 1-D tensor along `axis` of x.
    if (axisOk && inShape.size() == 1 && inShape[0] > 1 && n.attrs.getInt("block_size", 0) <= 0)
      return Index::ofDims(inShape, {out.dimExprs()[size_t(axis)]});
    // Blocked (opset 21): x's rank, `axis` counting blocks of block_size elements.
    if (int64_t block = n.attrs.getInt("block_size", 0);
        axisOk && block > 0 && inShape.size() == out.shape.size()) {
      std::vector<ExprRef> dims = out.dimExprs();
      dims[size_t(axis)] = div(dims[size_t(axis)], intConst(block));
      return Index::ofDims(inShape, std::move(dims));
    }
  }
  return broadcastIndex(out, inShape);
}

Status checkElementwiseOperands(const Graph& g, const Node& n) {
  if (isQuantOp(n)) {
    std::vector<int64_t> x = *g.value(n.inputs[0]).type.staticShape();
    int64_t axis = n.attrs.getInt("axis", 1);
    if (axis < 0) axis += int64_t(x.size());
    if (int64_t block = n.attrs.getInt("block_size", 0); block > 0) {
      for (size_t i = 1; i < n.inputs.size(); ++i) {
        if (!n.inputs[i].valid()) continue;
        std::vector<int64_t> s = *g.value(n.inputs[i]).type.staticShape();
        bool fits = axis >= 0 && axis < int64_t(x.size()) && s.size() == x.size();
        for (size_t d = 0; fits && d < x.size(); ++d)
          fits = int64_t(d) == axis ? s[d] == (x[d] + block - 1) / block : s[d] == x[d];
        if (!fits)
          return Status::error("the blocked input '" + g.value(n.inputs[i]).name + "' of shape " +
                                   formatShape(s) + " does not fit " + formatShape(x) +
                                   " with axis " + std::to_string(axis) + " and block_size " +
                                   std::to_string(block),
                               nodePlace(n));
      }
      return Status::ok();
    }
    for (size_t i = 1; i < n.inputs.size(); ++i) {
      if (!n.inputs[i].valid()) continue;
      std::vector<int64_t> s = *g.value(n.inputs[i]).type.staticShape();
      int64_t numel = 1;
      for (int64_t d : s) numel *= d;
      bool perAxis = s.size() == 1 && numel > 1;
      if (numel != 1 &&
          (!perAxis || axis < 0 || axis >= int64_t(x.size()) || x[size_t(axis)] != numel))
        return Status::error("input '" + g.value(n.inputs[i]).name + "' of shape " +
                                 formatShape(s) +
                                 " is neither one value nor one per element of axis " +
                                 std::to_string(axis) + " of " + formatShape(x),
                             nodePlace(n));
    }
  }
  return Status::ok();
}

}  // namespace fuselens
