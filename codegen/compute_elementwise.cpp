// Compute definitions of the elementwise family: Add, Sub, Mul, Div, Max, Min,
// Pow with a constant exponent (with ONNX multidirectional broadcasting), Relu,
// LeakyRelu, Sigmoid, Tanh, Exp, Neg, Abs, Sqrt, Reciprocal, Erf, Gelu. Each is an
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

bool isBinaryElementwise(const std::string& op) {
  return op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Max" || op == "Min" ||
         op == "Pow" || op == "PRelu" || (isCompareOrLogic(op) && op != "Not");
}

bool isCompareOrLogic(const std::string& op) {
  return op == "Equal" || op == "Less" || op == "LessOrEqual" || op == "Greater" ||
         op == "GreaterOrEqual" || op == "And" || op == "Or" || op == "Xor" || op == "Not";
}

namespace {

// x^p for the constant exponents models use; nullptr for others.
ExprRef powExpr(const ExprRef& x, double p) {
  if (p == 1) return x;
  if (p == 2) return mul(x, x);
  if (p == 3) return mul(mul(x, x), x);
  if (p == 0.5) return unary(UnOp::Sqrt, x);
  if (p == -1) return div(floatConst(1), x);
  if (p == -0.5) return div(floatConst(1), unary(UnOp::Sqrt, x));
  if (p == 0) return floatConst(1);
  return nullptr;
}

}  // namespace

ExprRef elementwiseExpr(KernelBuilder& kb, const Node& n, const std::vector<ExprRef>& args) {
  // Variadic ops fold left over their operands.
  if (n.op == "Sum" || n.op == "Mean" || ((n.op == "Max" || n.op == "Min") && args.size() != 2)) {
    if (args.empty()) {
      kb.fail(Status::error(n.op + " needs at least one input", nodePlace(n)));
      return floatConst(0);
    }
    ExprRef acc = args[0];
    for (size_t i = 1; i < args.size(); ++i) {
      if (n.op == "Max")
        acc = binary(BinOp::Max, acc, args[i]);
      else if (n.op == "Min")
        acc = binary(BinOp::Min, acc, args[i]);
      else
        acc = add(acc, args[i]);
    }
    if (n.op == "Mean") acc = mul(acc, floatConst(1.0 / double(args.size())));
    return acc;
  }
  if (n.op == "Clip") {  // min and max are optional inputs (absent: unbounded)
    ExprRef y = args[0];
    if (args.size() > 1 && args[1]) y = binary(BinOp::Max, y, args[1]);
    if (args.size() > 2 && args[2]) y = binary(BinOp::Min, y, args[2]);
    return y;
  }
  if (n.op == "PRelu" && args.size() == 2)
    return select(compare(CmpOp::GE, args[0], floatConst(0)), args[0], mul(args[0], args[1]));
  if (n.op == "Where") {
    if (args.size() != 3 || !args[0] || args[0]->type != DType::Bool || !args[1] || !args[2] ||
        args[1]->type != args[2]->type) {
      kb.fail(Status::error("Where takes a bool condition and two inputs of one type",
                            nodePlace(n)));
      return floatConst(0);
    }
    return select(args[0], args[1], args[2]);
  }
  bool binaryOp = isBinaryElementwise(n.op);
  if (args.size() != (binaryOp ? 2u : 1u)) {
    kb.fail(Status::error(
        n.op + " takes " + (binaryOp ? "2" : "1") + " inputs, got " + std::to_string(args.size()),
        nodePlace(n)));
    return floatConst(0);
  }
  const ExprRef& x = args[0];
  if (isCompareOrLogic(n.op)) {
    bool logic = n.op == "And" || n.op == "Or" || n.op == "Xor" || n.op == "Not";
    for (const ExprRef& a : args)
      if (a->type != args[0]->type || (logic && a->type != DType::Bool)) {
        kb.fail(Status::error(n.op + (logic ? " takes bool inputs" : " takes inputs of one type"),
                              nodePlace(n)));
        return floatConst(0);
      }
    if (n.op == "Equal") return compare(CmpOp::EQ, x, args[1]);
    if (n.op == "Less") return compare(CmpOp::LT, x, args[1]);
    if (n.op == "LessOrEqual") return compare(CmpOp::LE, x, args[1]);
    if (n.op == "Greater") return compare(CmpOp::GT, x, args[1]);
    if (n.op == "GreaterOrEqual") return compare(CmpOp::GE, x, args[1]);
    // Bools: false is 0 != 0; And / Or as selects, Xor as inequality.
    ExprRef no = compare(CmpOp::NE, intConst(0), intConst(0));
    if (n.op == "Not") return compare(CmpOp::EQ, x, no);
    if (n.op == "And") return select(x, args[1], no);
    if (n.op == "Or") return select(x, x, args[1]);
    return compare(CmpOp::NE, x, args[1]);  // Xor
  }
  if (n.op == "Add") return add(x, args[1]);
  if (n.op == "Sub") return sub(x, args[1]);
  if (n.op == "Mul") return mul(x, args[1]);
  if (n.op == "Div") return div(x, args[1]);
  if (n.op == "Max") return binary(BinOp::Max, x, args[1]);
  if (n.op == "Min") return binary(BinOp::Min, x, args[1]);
  if (n.op == "Pow") {
    ExprRef e = args[1]->kind == ExprKind::FloatConst ? powExpr(x, args[1]->f) : nullptr;
    if (!e)
      kb.fail(
          Status::error("Pow has code generation for a constant exponent in "
                        "{-1, -0.5, 0, 0.5, 1, 2, 3} only",
                        nodePlace(n)));
    return e ? e : floatConst(0);
  }
  if (n.op == "Neg") return unary(UnOp::Neg, x);
  if (n.op == "Abs") return unary(UnOp::Abs, x);
  if (n.op == "Sqrt") return unary(UnOp::Sqrt, x);
  if (n.op == "Reciprocal") return div(floatConst(1), x);
  if (n.op == "Erf") return unary(UnOp::Erf, x);
  if (n.op == "LeakyRelu")
    return select(compare(CmpOp::GE, x, floatConst(0)), x,
                  mul(x, floatConst(n.attrs.getFloat("alpha", 0.01))));
  if (n.op == "Gelu") {
    if (n.attrs.getString("approximate", "none") == "tanh") {
      ExprRef inner =
          mul(floatConst(0.7978845608028654), add(x, mul(floatConst(0.044715), mul(mul(x, x), x))));
      return mul(mul(floatConst(0.5), x), add(floatConst(1), unary(UnOp::Tanh, inner)));
    }
    return mul(mul(floatConst(0.5), x),
               add(floatConst(1), unary(UnOp::Erf, mul(x, floatConst(0.7071067811865476)))));
  }
  if (n.op == "Relu") return binary(BinOp::Max, x, floatConst(0));
  if (n.op == "Exp") return unary(UnOp::Exp, x);
  if (n.op == "Tanh") return unary(UnOp::Tanh, x);
  if (n.op == "Sigmoid")  // 1 / (1 + e^-x): exact at both tails in f32 (exp overflows to inf -> 0).
    return div(floatConst(1), add(floatConst(1), unary(UnOp::Exp, unary(UnOp::Neg, x))));
  kb.fail(Status::error("no code generation for op " + n.op, nodePlace(n)));
  return floatConst(0);
}

}  // namespace fuselens
