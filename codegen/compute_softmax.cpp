// Compute definition of Softmax with opset-13 semantics: normalized along one
// `axis` (default -1), max-subtracted so large logits do not overflow exp. For
// every position of the other dims: a max pass, a sum-of-exp pass, and a pass
// that hands exp(x - max) / sum to the Sink (where a fused epilogue applies).
// The input expression is inlined in each pass; recomputing a cheap producer is
// better than a temp buffer for it.
#include <cmath>

#include "codegen/compute.h"

namespace fuselens {

std::vector<StmtRef> lowerSoftmax(KernelBuilder& kb, const Node& n,
                                  const KernelBuilder::Sink& sink) {
  std::vector<int64_t> shape = kb.shapeOf(n.inputs[0]);
  int64_t rank = static_cast<int64_t>(shape.size());
  int64_t axis = n.attrs.getInt("axis", -1);
  if (axis < -rank || axis >= rank) {
    kb.fail(Status::error(
        "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank),
        nodePlace(n)));
    return {};
  }
  if (axis < 0) axis += rank;
  if (kb.shapeOf(n.outputs[0]) != shape) {
    kb.fail(Status::error("output shape differs from the input shape", nodePlace(n)));
    return {};
  }
  std::vector<int64_t> outer = shape;
  outer[axis] = 1;
  int64_t len = shape[axis];

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
    ExprRef e3 = unary(UnOp::Exp, sub(kb.valueAt(n.inputs[0], i3), varRef(mx)));
    return {
        let(mx, floatConst(-INFINITY)),
        forLoop(r1, len, {assign(mx, binary(BinOp::Max, varRef(mx), x1))}),
        let(sum, floatConst(0)),
        forLoop(r2, len, {assign(sum, add(varRef(sum), e2))}),
        forLoop(r3, len, sink(i3, div(e3, varRef(sum)))),
    };
  });
}

}  // namespace fuselens
