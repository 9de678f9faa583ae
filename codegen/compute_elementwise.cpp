// Compute definitions of the elementwise family: Add, Sub, Mul, Div (with ONNX
// multidirectional broadcasting), Relu, Sigmoid, Tanh, Exp. Each is an
// expression over already-indexed operands, which is what lets lowering inline
// a whole chain into one loop nest or into a MatMul's epilogue. Written apart
// from the eager kernels on purpose: a bug shared by both would hide from every
// comparison.
#include "codegen/compute.h"

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

ExprRef elementwiseExpr(KernelBuilder& kb, const Node& n, const std::vector<ExprRef>& args) {
  bool binaryOp = n.op == "Add" || n.op == "Sub" || n.op == "Mul" || n.op == "Div";
  if (args.size() != (binaryOp ? 2u : 1u)) {
    kb.fail(Status::error(
        n.op + " takes " + (binaryOp ? "2" : "1") + " inputs, got " + std::to_string(args.size()),
        nodePlace(n)));
    return floatConst(0);
  }
  const ExprRef& x = args[0];
  if (n.op == "Add") return add(x, args[1]);
  if (n.op == "Sub") return sub(x, args[1]);
  if (n.op == "Mul") return mul(x, args[1]);
  if (n.op == "Div") return div(x, args[1]);
  if (n.op == "Relu") return binary(BinOp::Max, x, floatConst(0));
  if (n.op == "Exp") return unary(UnOp::Exp, x);
  if (n.op == "Tanh") return unary(UnOp::Tanh, x);
  if (n.op == "Sigmoid")  // 1 / (1 + e^-x): exact at both tails in f32 (exp overflows to inf -> 0).
    return div(floatConst(1), add(floatConst(1), unary(UnOp::Exp, unary(UnOp::Neg, x))));
  kb.fail(Status::error("no code generation for op " + n.op, nodePlace(n)));
  return floatConst(0);
}

}  // namespace fuselens
