// Compute definitions of the elementwise family: arithmetic (Add ... Pow, Mod,
// BitShift, variadic Max/Min/Sum/Mean, with ONNX multidirectional
// broadcasting), comparisons and logic, Where, the unary math and activation
// functions, Cast/CastLike, Dropout (inference), QuantizeLinear and
// DequantizeLinear (per tensor or per axis). Each is an expression over
// already-indexed operands, which is what lets lowering inline a whole chain
// into one loop nest or into a MatMul's epilogue. Operands arrive in their
// compute type (f32 for f16/bf16, i64 for every integer; loop_ir.h) and the
// result is rounded to the op's dtype by valueAt, which is how eager computes
// too. Written apart from the eager kernels on purpose: a bug shared by both
// would hide from every comparison.
#include <cmath>

#include "codegen/lower/balanced_fold.h"
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

bool isBinaryElementwise(const std::string& op) {
  return op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Max" || op == "Min" ||
         op == "Pow" || op == "PRelu" || op == "Mod" || op == "BitShift" ||
         (isCompareOrLogic(op) && op != "Not");
}

bool isCompareOrLogic(const std::string& op) {
  return op == "Equal" || op == "Less" || op == "LessOrEqual" || op == "Greater" ||
         op == "GreaterOrEqual" || op == "And" || op == "Or" || op == "Xor" || op == "Not";
}

bool computeHandlesDType(const Node& n, DType t) {
  switch (computeClassOf(n)) {
    // Each definition widens its operands and checks the kinds it needs.
    case ComputeClass::Elementwise:
    case ComputeClass::IndexMap:
      return true;
    case ComputeClass::Injective:
      return n.op == "Concat" || t == DType::F32 || t == DType::F16 || t == DType::BF16;
    // Reductions accumulate in f32: f16/bf16 data is widened on load and
    // rounded once on store, as eager's computeHalfInF32 does. MatMul also
    // multiplies integers (an i64 accumulator, compute_matmul.cpp).
    default:
      if (n.op == "MatMul" && (t == DType::I32 || t == DType::I64)) return true;
      // Integer Max/Min (i64) and Sum/Prod (f64, saturated) (compute_reduce.cpp); the
      // others take logs, roots or means, which eager computes in double.
      if ((n.op == "ReduceMax" || n.op == "ReduceMin" || n.op == "ReduceSum" ||
           n.op == "ReduceProd") &&
          t != DType::Bool && computeType(t) == DType::I64)
        return true;
      return t == DType::F32 || t == DType::F16 || t == DType::BF16;
  }
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

namespace {

// Constants in the type of the expression they combine with.
ExprRef num(const ExprRef& like, double v) {
  DType t = like->type;
  if (t == DType::I64) return intConst(int64_t(v));
  if (t == DType::Bool) return boolConst(v != 0);
  return floatConst(v, t);
}

bool isFloatExpr(const ExprRef& e) { return e->type == DType::F32 || e->type == DType::F64; }

// x^p for the constant exponents models use; nullptr for others.
ExprRef powExpr(const ExprRef& x, double p) {
  if (p == 1) return x;
  if (p == 2) return mul(x, x);
  if (p == 3) return mul(mul(x, x), x);
  if (p == 0.5) return unary(UnOp::Sqrt, x);
  if (p == -1) return div(num(x, 1), x);
  if (p == -0.5) return div(num(x, 1), unary(UnOp::Sqrt, x));
  if (p == 0) return num(x, 1);
  return nullptr;
}

ExprRef clamp01(const ExprRef& x) {
  return binary(BinOp::Max, binary(BinOp::Min, x, num(x, 1)), num(x, 0));
}

// log(1 + e^x) without overflow: max(x, 0) + log(1 + e^-|x|).
ExprRef softplus(const ExprRef& x) {
  ExprRef t = unary(UnOp::Exp, unary(UnOp::Neg, unary(UnOp::Abs, x)));
  return add(binary(BinOp::Max, x, num(x, 0)), unary(UnOp::Log, add(num(x, 1), t)));
}

ExprRef expm1(const ExprRef& x) { return sub(unary(UnOp::Exp, x), num(x, 1)); }

ExprRef bad(KernelBuilder& kb, const Node& n, const std::string& why) {
  kb.fail(Status::error(why, nodePlace(n)));
  return floatConst(0);
}

DType outDType(KernelBuilder& kb, const Node& n, size_t k = 0) {
  return kb.graph().value(n.outputs[k]).type.dtype;
}

// x^y with eager's semantics: float bases in f64 (std::pow), integer bases in
// f64 truncated back to an integer; the exponent may have another type.
ExprRef powGeneral(const ExprRef& x, const ExprRef& y) {
  if (y->kind == ExprKind::FloatConst || (y->kind == ExprKind::IntConst && y->type == DType::I64)) {
    double p = y->kind == ExprKind::FloatConst ? y->f : double(y->i);
    if (isFloatExpr(x))
      if (ExprRef e = powExpr(x, p)) return e;
  }
  ExprRef yy = x->type == DType::I64 ? cast(cast(y, DType::I64), DType::F64) : cast(y, DType::F64);
  ExprRef r = binary(BinOp::Pow, cast(x, DType::F64), yy);
  return cast(r, x->type);
}

ExprRef modExpr(const ExprRef& a, const ExprRef& b, bool cStyle) {
  ExprRef m = binary(BinOp::Mod, a, b);  // C's % / fmod: the dividend's sign
  if (cStyle) return m;
  // Python style: the divisor's sign.
  ExprRef zero = num(a, 0);
  ExprRef fix = compare(CmpOp::NE, compare(CmpOp::LT, m, zero), compare(CmpOp::LT, b, zero));
  // (x % -1 and x % 0 are defined by the backend: 0, and x % 1.)
  return select(compare(CmpOp::NE, m, zero), select(fix, add(m, b), m), m);
}

ExprRef quantize(KernelBuilder& kb, const Node& n, const std::vector<ExprRef>& args) {
  DType out = outDType(kb, n);
  int64_t lo = 0, hi = 255;
  if (out == DType::I8)
    lo = -128, hi = 127;
  else if (out == DType::I16)
    lo = -32768, hi = 32767;
  else if (out != DType::U8)
    return bad(kb, n, "quantizing to " + std::string(dtypeName(out)) + " has no code generation");
  ExprRef x = cast(args[0], DType::F32), s = cast(args[1], DType::F32);
  // x / scale in f32 (as ONNX Runtime), round half to even, add the zero point,
  // saturate to the output type (NaN -> 0).
  ExprRef q = unary(UnOp::Round, div(x, s));
  if (args.size() > 2 && args[2]) q = add(q, cast(args[2], DType::F32));
  ExprRef c =
      binary(BinOp::Max, binary(BinOp::Min, q, floatConst(double(hi))), floatConst(double(lo)));
  c = select(compare(CmpOp::NE, q, q), floatConst(0), c);
  return cast(c, DType::I64);
}

ExprRef dequantize(KernelBuilder& kb, const Node& n, const std::vector<ExprRef>& args) {
  if (args[0]->type != DType::I64) return bad(kb, n, "DequantizeLinear takes an integer input");
  ExprRef q = args[0];
  if (args.size() > 2 && args[2]) q = sub(q, args[2]);
  // float(x - zp) * float(scale), in f32 as eager and ONNX Runtime do.
  return cast(mul(cast(q, DType::F32), cast(args[1], DType::F32)), computeType(outDType(kb, n)));
}

// Unary float functions and activations; nullptr when op is not one of them.
ExprRef floatUnary(const Node& n, const ExprRef& x) {
  const std::string& op = n.op;
  auto attr = [&](const char* name, double dflt) {
    return num(x, n.attrs.getFloat(name, float(dflt)));
  };
  if (op == "Sqrt") return unary(UnOp::Sqrt, x);
  if (op == "Reciprocal") return div(num(x, 1), x);
  if (op == "Erf") return unary(UnOp::Erf, x);
  if (op == "Exp") return unary(UnOp::Exp, x);
  if (op == "Tanh") return unary(UnOp::Tanh, x);
  if (op == "Log") return unary(UnOp::Log, x);
  if (op == "Sin") return unary(UnOp::Sin, x);
  if (op == "Cos") return unary(UnOp::Cos, x);
  if (op == "Tan") return unary(UnOp::Tan, x);
  if (op == "Atan") return unary(UnOp::Atan, x);
  if (op == "Floor") return unary(UnOp::Floor, x);
  if (op == "Ceil") return unary(UnOp::Ceil, x);
  if (op == "Round") return unary(UnOp::Round, x);  // half to even
  if (op == "Sigmoid")  // 1 / (1 + e^-x): exact at both tails (exp overflows to inf -> 0).
    return div(num(x, 1), add(num(x, 1), unary(UnOp::Exp, unary(UnOp::Neg, x))));
  if (op == "LeakyRelu")
    return select(compare(CmpOp::GE, x, num(x, 0)), x, mul(x, attr("alpha", 0.01)));
  if (op == "Gelu") {
    if (n.attrs.getString("approximate", "none") == "tanh") {
      ExprRef inner =
          mul(num(x, 0.7978845608028654), add(x, mul(num(x, 0.044715), mul(mul(x, x), x))));
      return mul(mul(num(x, 0.5), x), add(num(x, 1), unary(UnOp::Tanh, inner)));
    }
    return mul(mul(num(x, 0.5), x),
               add(num(x, 1), unary(UnOp::Erf, mul(x, num(x, 0.7071067811865476)))));
  }
  if (op == "Softplus") return softplus(x);
  if (op == "Softsign") return div(x, add(num(x, 1), unary(UnOp::Abs, x)));
  if (op == "Mish") return mul(x, unary(UnOp::Tanh, softplus(x)));
  if (op == "Elu")
    return select(compare(CmpOp::GE, x, num(x, 0)), x, mul(attr("alpha", 1.0), expm1(x)));
  if (op == "Selu") {
    ExprRef a = attr("alpha", 1.67326319217681884765625),
            g = attr("gamma", 1.05070102214813232421875);
    return select(compare(CmpOp::GT, x, num(x, 0)), mul(g, x), mul(mul(g, a), expm1(x)));
  }
  if (op == "Celu") {
    ExprRef a = attr("alpha", 1.0);
    return add(binary(BinOp::Max, x, num(x, 0)),
               binary(BinOp::Min, mul(a, expm1(div(x, a))), num(x, 0)));
  }
  if (op == "ThresholdedRelu")
    return select(compare(CmpOp::GT, x, attr("alpha", 1.0)), x, num(x, 0));
  if (op == "HardSigmoid") return clamp01(add(mul(attr("alpha", 0.2), x), attr("beta", 0.5)));
  if (op == "HardSwish") return mul(x, clamp01(add(div(x, num(x, 6)), num(x, 0.5))));
  return nullptr;
}

}  // namespace

ExprRef elementwiseExpr(KernelBuilder& kb, const Node& n, const std::vector<ExprRef>& args,
                        size_t output) {
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i] && (args[i]->type == DType::F16 || args[i]->type == DType::BF16))
      return bad(kb, n, "internal: operand " + std::to_string(i) + " was not widened");
  // Variadic ops fold over their operands as a balanced tree (balanced_fold.h).
  if (n.op == "Sum" || n.op == "Mean" || ((n.op == "Max" || n.op == "Min") && args.size() != 2)) {
    if (args.empty()) return bad(kb, n, n.op + " needs at least one input");
    for (size_t i = 1; i < args.size(); ++i)
      if (args[i]->type != args[0]->type) return bad(kb, n, n.op + " takes inputs of one type");
    BinOp op = n.op == "Max" ? BinOp::Max : n.op == "Min" ? BinOp::Min : BinOp::Add;
    ExprRef acc = foldBalanced(args, [op](ExprRef a, ExprRef b) { return binary(op, a, b); });
    if (n.op == "Mean") {
      if (!isFloatExpr(acc)) return bad(kb, n, "Mean takes floating-point inputs");
      acc = mul(acc, num(acc, 1.0 / double(args.size())));
    }
    return acc;
  }
  if (args.empty() || !args[0]) return bad(kb, n, n.op + " is missing its first input");
  const ExprRef& x = args[0];
  if (n.op == "Cast" || n.op == "CastLike") return cast(x, outDType(kb, n));
  if (n.op == "Dropout") {  // inference: y = x, the mask all true
    if (output == 1) return boolConst(true);
    return x;
  }
  if (n.op == "QuantizeLinear") return quantize(kb, n, args);
  if (n.op == "DequantizeLinear") return dequantize(kb, n, args);
  if (n.op == "Clip") {  // min and max are optional inputs (absent: unbounded)
    ExprRef y = x;
    for (size_t i = 1; i < args.size(); ++i)
      if (args[i] && args[i]->type != x->type)
        return bad(kb, n, "Clip takes bounds of its input's type");
    if (args.size() > 1 && args[1]) y = binary(BinOp::Max, y, args[1]);
    if (args.size() > 2 && args[2]) y = binary(BinOp::Min, y, args[2]);
    return y;
  }
  if (n.op == "Where") {
    if (args.size() != 3 || args[0]->type != DType::Bool || !args[1] || !args[2] ||
        args[1]->type != args[2]->type)
      return bad(kb, n, "Where takes a bool condition and two inputs of one type");
    return select(args[0], args[1], args[2]);
  }
  bool binaryOp = isBinaryElementwise(n.op);
  if (args.size() != (binaryOp ? 2u : 1u))
    return bad(
        kb, n,
        n.op + " takes " + (binaryOp ? "2" : "1") + " inputs, got " + std::to_string(args.size()));
  if (isCompareOrLogic(n.op)) {
    bool logic = n.op == "And" || n.op == "Or" || n.op == "Xor" || n.op == "Not";
    for (const ExprRef& a : args)
      if (a->type != args[0]->type || (logic && a->type != DType::Bool))
        return bad(kb, n, n.op + (logic ? " takes bool inputs" : " takes inputs of one type"));
    if (n.op == "Equal") return compare(CmpOp::EQ, x, args[1]);
    if (n.op == "Less") return compare(CmpOp::LT, x, args[1]);
    if (n.op == "LessOrEqual") return compare(CmpOp::LE, x, args[1]);
    if (n.op == "Greater") return compare(CmpOp::GT, x, args[1]);
    if (n.op == "GreaterOrEqual") return compare(CmpOp::GE, x, args[1]);
    ExprRef no = boolConst(false);
    if (n.op == "Not") return compare(CmpOp::EQ, x, no);
    if (n.op == "And") return select(x, args[1], no);
    if (n.op == "Or") return select(x, x, args[1]);
    return compare(CmpOp::NE, x, args[1]);  // Xor
  }
  if (x->type == DType::Bool) return bad(kb, n, n.op + " does not take bool inputs");
  if (n.op == "Pow") return powGeneral(x, args[1]);
  if (binaryOp && args[1]->type != x->type)
    return bad(kb, n,
               n.op + " takes inputs of one type, got " + std::string(dtypeName(x->type)) +
                   " and " + std::string(dtypeName(args[1]->type)));
  bool fp = isFloatExpr(x);
  if (n.op == "Add") return add(x, args[1]);
  if (n.op == "Sub") return sub(x, args[1]);
  if (n.op == "Mul") return mul(x, args[1]);
  if (n.op == "Div") return div(x, args[1]);  // integers truncate toward zero
  if (n.op == "Max") return binary(BinOp::Max, x, args[1]);
  if (n.op == "Min") return binary(BinOp::Min, x, args[1]);
  if (n.op == "Mod") return modExpr(x, args[1], n.attrs.getInt("fmod", 0) != 0);
  if (n.op == "PRelu") return select(compare(CmpOp::GE, x, num(x, 0)), x, mul(x, args[1]));
  if (n.op == "BitShift") {
    if (fp) return bad(kb, n, "BitShift takes unsigned integer inputs");
    bool left = n.attrs.getString("direction", "") == "LEFT";
    return binary(left ? BinOp::Shl : BinOp::Shr, x, args[1]);
  }
  if (n.op == "Neg") return unary(UnOp::Neg, x);
  if (n.op == "Abs")
    return fp ? unary(UnOp::Abs, x)
              : select(compare(CmpOp::LT, x, num(x, 0)), unary(UnOp::Neg, x), x);
  if (n.op == "Relu") return binary(BinOp::Max, x, num(x, 0));
  if (n.op == "Sign") {
    ExprRef zeroOrX = fp ? select(compare(CmpOp::EQ, x, num(x, 0)), num(x, 0), x) : num(x, 0);
    return select(compare(CmpOp::GT, x, num(x, 0)), num(x, 1),
                  select(compare(CmpOp::LT, x, num(x, 0)), num(x, -1), zeroOrX));
  }
  if (n.op == "IsNaN") return compare(CmpOp::NE, x, x);
  if (n.op == "IsInf") {
    ExprRef r = boolConst(false);
    if (n.attrs.getInt("detect_positive", 1)) r = compare(CmpOp::EQ, x, num(x, INFINITY));
    if (n.attrs.getInt("detect_negative", 1)) {
      ExprRef neg = compare(CmpOp::EQ, x, num(x, -INFINITY));
      r = r->kind == ExprKind::IntConst ? neg : select(r, r, neg);
    }
    return r;
  }
  if (!fp) return bad(kb, n, n.op + " takes floating-point inputs");
  if (ExprRef e = floatUnary(n, x)) return e;
  return bad(kb, n, "no code generation for op " + n.op);
}

}  // namespace fuselens
