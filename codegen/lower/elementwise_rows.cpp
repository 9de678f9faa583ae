// The elementwise rows of codegen's dispatch table: one row per op, with its
// arity, the operand kinds it takes (its dtypes column) and the expression it
// builds from already-indexed operands. elementwiseExpr finds the row, checks
// arity and kinds once for every row, and calls it; a row with Arity::Own
// checks its operands itself (optional inputs, mixed types).
//
// Operands arrive in their compute type (f32 for f16/bf16, i64 for every
// integer; loop_ir.h) and the result is rounded to the op's dtype by valueAt,
// which is how eager computes too. Written apart from the eager kernels on
// purpose: a bug shared by both would hide from every comparison.
#include <cmath>
#include <string_view>

#include "codegen/lower/balanced_fold.h"
#include "codegen/lower/compute.h"

namespace fuselens {
namespace {

// Constants in the type of the expression they combine with.
ExprRef num(const ExprRef& like, double v) {
  DType t = like->type;
  if (t == DType::I64) return intConst(int64_t(v));
  if (t == DType::Bool) return boolConst(v != 0);
  return floatConst(v, t);
}

bool isFloatExpr(const ExprRef& e) { return e->type == DType::F32 || e->type == DType::F64; }

ExprRef bad(KernelBuilder& kb, const Node& n, const std::string& why) {
  kb.fail(Status::error(why, nodePlace(n)));
  return floatConst(0);
}

// What a row's expression reads: the node, its operands, the output asked for.
struct Operands {
  KernelBuilder& kb;
  const Node& n;
  const std::vector<ExprRef>& args;
  size_t output;

  const ExprRef& x() const { return args[0]; }
  const ExprRef& y() const { return args[1]; }
  ExprRef attr(const char* name, double dflt) const {
    return num(x(), n.attrs.getFloat(name, float(dflt)));
  }
  DType outType() const { return kb.graph().value(n.outputs[0]).type.dtype; }
  ExprRef fail(const std::string& why) const { return bad(kb, n, why); }
};

using ExprFn = ExprRef (*)(const Operands&);

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

// x^y with eager's semantics: float bases in f64 (std::pow), integer bases in
// f64 truncated back to an integer; the exponent may have another type.
ExprRef powGeneral(const Operands& o) {
  const ExprRef &x = o.x(), &y = o.y();
  if (y->kind == ExprKind::FloatConst || (y->kind == ExprKind::IntConst && y->type == DType::I64)) {
    double p = y->kind == ExprKind::FloatConst ? y->f : double(y->i);
    if (isFloatExpr(x))
      if (ExprRef e = powExpr(x, p)) return e;
  }
  ExprRef yy = x->type == DType::I64 ? cast(cast(y, DType::I64), DType::F64) : cast(y, DType::F64);
  return cast(binary(BinOp::Pow, cast(x, DType::F64), yy), x->type);
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

ExprRef modExpr(const Operands& o) {
  const ExprRef &a = o.x(), &b = o.y();
  ExprRef m = binary(BinOp::Mod, a, b);  // C's % / fmod: the dividend's sign
  if (o.n.attrs.getInt("fmod", 0) != 0) return m;
  // Python style: the divisor's sign.
  ExprRef zero = num(a, 0);
  ExprRef fix = compare(CmpOp::NE, compare(CmpOp::LT, m, zero), compare(CmpOp::LT, b, zero));
  // (x % -1 and x % 0 are defined by the backend: 0, and x % 1.)
  return select(compare(CmpOp::NE, m, zero), select(fix, add(m, b), m), m);
}

ExprRef quantize(const Operands& o) {
  DType out = o.outType();
  int64_t lo = 0, hi = 255;
  if (out == DType::I8)
    lo = -128, hi = 127;
  else if (out == DType::I16)
    lo = -32768, hi = 32767;
  else if (out != DType::U8)
    return o.fail("quantizing to " + std::string(dtypeName(out)) + " has no code generation");
  ExprRef x = cast(o.x(), DType::F32), s = cast(o.y(), DType::F32);
  // x / scale in f32 (as ONNX Runtime), round half to even, add the zero point,
  // saturate to the output type (NaN -> 0).
  ExprRef q = unary(UnOp::Round, div(x, s));
  if (o.args.size() > 2 && o.args[2]) q = add(q, cast(o.args[2], DType::F32));
  ExprRef c =
      binary(BinOp::Max, binary(BinOp::Min, q, floatConst(double(hi))), floatConst(double(lo)));
  c = select(compare(CmpOp::NE, q, q), floatConst(0), c);
  return cast(c, DType::I64);
}

ExprRef dequantize(const Operands& o) {
  if (o.x()->type != DType::I64) return o.fail("DequantizeLinear takes an integer input");
  ExprRef q = o.x();
  if (o.args.size() > 2 && o.args[2]) q = sub(q, o.args[2]);
  // float(x - zp) * float(scale), in f32 as eager and ONNX Runtime do.
  return cast(mul(cast(q, DType::F32), cast(o.y(), DType::F32)), computeType(o.outType()));
}

ExprRef clip(const Operands& o) {  // min and max are optional inputs (absent: unbounded)
  ExprRef y = o.x();
  for (size_t i = 1; i < o.args.size(); ++i)
    if (o.args[i] && o.args[i]->type != o.x()->type)
      return o.fail("Clip takes bounds of its input's type");
  if (o.args.size() > 1 && o.args[1]) y = binary(BinOp::Max, y, o.args[1]);
  if (o.args.size() > 2 && o.args[2]) y = binary(BinOp::Min, y, o.args[2]);
  return y;
}

ExprRef where(const Operands& o) {
  const auto& a = o.args;
  if (a.size() != 3 || a[0]->type != DType::Bool || !a[1] || !a[2] || a[1]->type != a[2]->type)
    return o.fail("Where takes a bool condition and two inputs of one type");
  return select(a[0], a[1], a[2]);
}

// Sum, Mean and variadic Max / Min fold as a balanced tree (balanced_fold.h).
ExprRef variadic(const Operands& o) {
  const std::string& op = o.n.op;
  BinOp b = op == "Max" ? BinOp::Max : op == "Min" ? BinOp::Min : BinOp::Add;
  ExprRef acc = foldBalanced(o.args, [b](ExprRef l, ExprRef r) { return binary(b, l, r); });
  if (op == "Mean") {
    if (!isFloatExpr(acc)) return o.fail("Mean takes floating-point inputs");
    acc = mul(acc, num(acc, 1.0 / double(o.args.size())));
  }
  return acc;
}

ExprRef absExpr(const Operands& o) {
  const ExprRef& x = o.x();
  return isFloatExpr(x) ? unary(UnOp::Abs, x)
                        : select(compare(CmpOp::LT, x, num(x, 0)), unary(UnOp::Neg, x), x);
}

ExprRef sign(const Operands& o) {
  const ExprRef& x = o.x();
  ExprRef zeroOrX =
      isFloatExpr(x) ? select(compare(CmpOp::EQ, x, num(x, 0)), num(x, 0), x) : num(x, 0);
  return select(compare(CmpOp::GT, x, num(x, 0)), num(x, 1),
                select(compare(CmpOp::LT, x, num(x, 0)), num(x, -1), zeroOrX));
}

ExprRef isInf(const Operands& o) {
  const ExprRef& x = o.x();
  ExprRef r = boolConst(false);
  if (o.n.attrs.getInt("detect_positive", 1)) r = compare(CmpOp::EQ, x, num(x, INFINITY));
  if (o.n.attrs.getInt("detect_negative", 1)) {
    ExprRef neg = compare(CmpOp::EQ, x, num(x, -INFINITY));
    r = r->kind == ExprKind::IntConst ? neg : select(r, r, neg);
  }
  return r;
}

ExprRef gelu(const Operands& o) {
  const ExprRef& x = o.x();
  if (o.n.attrs.getString("approximate", "none") == "tanh") {
    ExprRef inner =
        mul(num(x, 0.7978845608028654), add(x, mul(num(x, 0.044715), mul(mul(x, x), x))));
    return mul(mul(num(x, 0.5), x), add(num(x, 1), unary(UnOp::Tanh, inner)));
  }
  return mul(mul(num(x, 0.5), x),
             add(num(x, 1), unary(UnOp::Erf, mul(x, num(x, 0.7071067811865476)))));
}

ExprRef selu(const Operands& o) {
  const ExprRef& x = o.x();
  ExprRef a = o.attr("alpha", 1.67326319217681884765625),
          g = o.attr("gamma", 1.05070102214813232421875);
  return select(compare(CmpOp::GT, x, num(x, 0)), mul(g, x), mul(mul(g, a), expm1(x)));
}

ExprRef celu(const Operands& o) {
  const ExprRef& x = o.x();
  ExprRef a = o.attr("alpha", 1.0);
  return add(binary(BinOp::Max, x, num(x, 0)),
             binary(BinOp::Min, mul(a, expm1(div(x, a))), num(x, 0)));
}

template <UnOp U>
ExprRef un(const Operands& o) {
  return unary(U, o.x());
}
template <BinOp B>
ExprRef bin(const Operands& o) {
  return binary(B, o.x(), o.y());
}
template <CmpOp C>
ExprRef cmp(const Operands& o) {
  return compare(C, o.x(), o.y());
}

// x >= 0 ? x : other, the shape of PRelu, LeakyRelu and Elu.
ExprRef positiveOr(const ExprRef& x, const ExprRef& other) {
  return select(compare(CmpOp::GE, x, num(x, 0)), x, other);
}

ExprRef prelu(const Operands& o) { return positiveOr(o.x(), mul(o.x(), o.y())); }
ExprRef leakyRelu(const Operands& o) {
  return positiveOr(o.x(), mul(o.x(), o.attr("alpha", 0.01)));
}
ExprRef elu(const Operands& o) {
  return positiveOr(o.x(), mul(o.attr("alpha", 1.0), expm1(o.x())));
}
ExprRef bitShift(const Operands& o) {
  bool left = o.n.attrs.getString("direction", "") == "LEFT";
  return binary(left ? BinOp::Shl : BinOp::Shr, o.x(), o.y());
}
ExprRef logicNot(const Operands& o) { return compare(CmpOp::EQ, o.x(), boolConst(false)); }
ExprRef logicAnd(const Operands& o) { return select(o.x(), o.y(), boolConst(false)); }
ExprRef logicOr(const Operands& o) { return select(o.x(), o.x(), o.y()); }
ExprRef castTo(const Operands& o) { return cast(o.x(), o.outType()); }
// Inference: y = x, the mask all true.
ExprRef dropout(const Operands& o) { return o.output == 1 ? boolConst(true) : o.x(); }
ExprRef relu(const Operands& o) { return binary(BinOp::Max, o.x(), num(o.x(), 0)); }
ExprRef isNaN(const Operands& o) { return compare(CmpOp::NE, o.x(), o.x()); }
ExprRef reciprocal(const Operands& o) { return div(num(o.x(), 1), o.x()); }
// 1 / (1 + e^-x), one unary op so each backend picks its own stable form.
ExprRef sigmoid(const Operands& o) { return unary(UnOp::Sigmoid, o.x()); }
ExprRef softplusRow(const Operands& o) { return softplus(o.x()); }
ExprRef softsign(const Operands& o) {
  return div(o.x(), add(num(o.x(), 1), unary(UnOp::Abs, o.x())));
}
ExprRef mish(const Operands& o) { return mul(o.x(), unary(UnOp::Tanh, softplus(o.x()))); }
ExprRef thresholdedRelu(const Operands& o) {
  return select(compare(CmpOp::GT, o.x(), o.attr("alpha", 1.0)), o.x(), num(o.x(), 0));
}
ExprRef hardSigmoid(const Operands& o) {
  return clamp01(add(mul(o.attr("alpha", 0.2), o.x()), o.attr("beta", 0.5)));
}
ExprRef hardSwish(const Operands& o) {
  return mul(o.x(), clamp01(add(div(o.x(), num(o.x(), 6)), num(o.x(), 0.5))));
}

// Arity: how many operands the generic check expects (Own: the row checks).
enum class Arity : uint8_t { Unary, Binary, Variadic, Own };

struct ElementwiseRow {
  std::string_view op;
  Arity arity;
  OperandKinds kinds;
  ExprFn expr;
};

using K = OperandKinds;
using A = Arity;
const ElementwiseRow kElementwiseRows[] = {
    // arithmetic, with ONNX multidirectional broadcasting
    {"Add", A::Binary, K::Numeric, bin<BinOp::Add>},
    {"Sub", A::Binary, K::Numeric, bin<BinOp::Sub>},
    {"Mul", A::Binary, K::Numeric, bin<BinOp::Mul>},
    {"Div", A::Binary, K::Numeric, bin<BinOp::Div>},  // integers truncate toward zero
    {"Max", A::Variadic, K::Numeric, variadic},       // two inputs: one max
    {"Min", A::Variadic, K::Numeric, variadic},       // a balanced fold
    {"Sum", A::Variadic, K::Numeric, variadic},       // a balanced fold of adds
    {"Mean", A::Variadic, K::Numeric, variadic},      // the sum times 1/N
    {"Pow", A::Binary, K::NumericBase, powGeneral},   // constant exponents unrolled
    {"Mod", A::Binary, K::Numeric, modExpr},          // fmod=1: C's sign, else the divisor's
    {"PRelu", A::Binary, K::Numeric, prelu},          // x >= 0 ? x : x * slope
    {"BitShift", A::Binary, K::Integer, bitShift},    // direction LEFT or RIGHT
    // comparisons (any one input type, bool result) and logic (bool in and out)
    {"Equal", A::Binary, K::Same, cmp<CmpOp::EQ>},
    {"Less", A::Binary, K::Same, cmp<CmpOp::LT>},
    {"LessOrEqual", A::Binary, K::Same, cmp<CmpOp::LE>},
    {"Greater", A::Binary, K::Same, cmp<CmpOp::GT>},
    {"GreaterOrEqual", A::Binary, K::Same, cmp<CmpOp::GE>},
    {"Not", A::Unary, K::Bool, logicNot},         // x == false
    {"And", A::Binary, K::Bool, logicAnd},        // x ? y : false
    {"Or", A::Binary, K::Bool, logicOr},          // x ? x : y
    {"Xor", A::Binary, K::Bool, cmp<CmpOp::NE>},  // x != y
    // selection, conversion, quantization: the row checks its operands
    {"Where", A::Own, K::Any, where},                  // bool condition, two of one type
    {"Clip", A::Own, K::Any, clip},                    // optional min, max
    {"Cast", A::Own, K::Any, castTo},                  // to the output's dtype
    {"CastLike", A::Own, K::Any, castTo},              // the second input gives the type
    {"Dropout", A::Own, K::Any, dropout},              // inference: identity, mask true
    {"QuantizeLinear", A::Own, K::Any, quantize},      // f32 -> u8/i8/i16, saturated
    {"DequantizeLinear", A::Own, K::Any, dequantize},  // (q - zp) * scale in f32
    // unary on any number
    {"Neg", A::Unary, K::Numeric, un<UnOp::Neg>},
    {"Abs", A::Unary, K::Numeric, absExpr},
    {"Relu", A::Unary, K::Numeric, relu},    // max(x, 0)
    {"Sign", A::Unary, K::Numeric, sign},    // -1, 0, 1 (NaN stays NaN)
    {"IsNaN", A::Unary, K::Numeric, isNaN},  // x != x
    {"IsInf", A::Unary, K::Numeric, isInf},  // detect_positive, detect_negative
    // unary float math
    {"Sqrt", A::Unary, K::Float, un<UnOp::Sqrt>},
    {"Reciprocal", A::Unary, K::Float, reciprocal},
    {"Erf", A::Unary, K::Float, un<UnOp::Erf>},
    {"Exp", A::Unary, K::Float, un<UnOp::Exp>},
    {"Tanh", A::Unary, K::Float, un<UnOp::Tanh>},
    {"Log", A::Unary, K::Float, un<UnOp::Log>},
    {"Sin", A::Unary, K::Float, un<UnOp::Sin>},
    {"Cos", A::Unary, K::Float, un<UnOp::Cos>},
    {"Tan", A::Unary, K::Float, un<UnOp::Tan>},
    {"Atan", A::Unary, K::Float, un<UnOp::Atan>},
    {"Floor", A::Unary, K::Float, un<UnOp::Floor>},
    {"Ceil", A::Unary, K::Float, un<UnOp::Ceil>},
    {"Round", A::Unary, K::Float, un<UnOp::Round>},  // half to even
    // activations
    {"Sigmoid", A::Unary, K::Float, sigmoid},       // 1 / (1 + e^-x)
    {"LeakyRelu", A::Unary, K::Float, leakyRelu},   // x >= 0 ? x : alpha * x
    {"Gelu", A::Unary, K::Float, gelu},             // erf form, or approximate="tanh"
    {"Softplus", A::Unary, K::Float, softplusRow},  // log(1 + e^x), no overflow
    {"Softsign", A::Unary, K::Float, softsign},     // x / (1 + |x|)
    {"Mish", A::Unary, K::Float, mish},             // x * tanh(softplus(x))
    {"Elu", A::Unary, K::Float, elu},               // x >= 0 ? x : alpha * (e^x - 1)
    {"Selu", A::Unary, K::Float, selu},             // gamma * (x > 0 ? x : alpha * (e^x - 1))
    {"Celu", A::Unary, K::Float, celu},             // max(0, x) + min(0, alpha * (e^(x/alpha) - 1))
    {"ThresholdedRelu", A::Unary, K::Float, thresholdedRelu},  // x > alpha ? x : 0
    {"HardSigmoid", A::Unary, K::Float, hardSigmoid},          // clamp(alpha * x + beta, 0, 1)
    {"HardSwish", A::Unary, K::Float, hardSwish},              // x * clamp(x / 6 + 0.5, 0, 1)
};

const ElementwiseRow* rowOf(std::string_view op) {
  for (const ElementwiseRow& r : kElementwiseRows)
    if (r.op == op) return &r;
  return nullptr;
}

// The kinds check every row shares; an error sentence, or empty when they fit.
std::string kindsError(const ElementwiseRow& row, const std::vector<ExprRef>& args) {
  const std::string op(row.op);
  const ExprRef& x = args[0];
  switch (row.kinds) {
    case K::Any:
      return {};
    case K::Same:
    case K::Bool:
      for (const ExprRef& a : args)
        if (a->type != x->type || (row.kinds == K::Bool && a->type != DType::Bool))
          return op + (row.kinds == K::Bool ? " takes bool inputs" : " takes inputs of one type");
      return {};
    default:
      break;
  }
  if (x->type == DType::Bool) return op + " does not take bool inputs";
  if (row.kinds == K::Float && !isFloatExpr(x)) return op + " takes floating-point inputs";
  if (row.kinds == K::Integer && isFloatExpr(x)) return op + " takes unsigned integer inputs";
  if (row.kinds != K::NumericBase)
    for (size_t i = 1; i < args.size(); ++i)
      if (args[i]->type != x->type)
        return op + " takes inputs of one type, got " + std::string(dtypeName(x->type)) + " and " +
               std::string(dtypeName(args[i]->type));
  return {};
}

}  // namespace

bool hasElementwiseRow(std::string_view op) { return rowOf(op) != nullptr; }

bool isBinaryElementwise(const std::string& op) {
  const ElementwiseRow* r = rowOf(op);
  return r && r->arity == Arity::Binary;
}

OperandKinds elementwiseKinds(std::string_view op) {
  const ElementwiseRow* r = rowOf(op);
  return r ? r->kinds : OperandKinds::Float;
}

ExprRef elementwiseExpr(KernelBuilder& kb, const Node& n, const std::vector<ExprRef>& args,
                        size_t output) {
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i] && (args[i]->type == DType::F16 || args[i]->type == DType::BF16))
      return bad(kb, n, "internal: operand " + std::to_string(i) + " was not widened");
  const ElementwiseRow* row = rowOf(n.op);
  if (!row) return bad(kb, n, "no code generation for op " + n.op);
  if (args.empty() || !args[0])
    return bad(kb, n,
               n.op + (row->arity == Arity::Variadic ? " needs at least one input"
                                                     : " is missing its first input"));
  const Operands o{kb, n, args, output};
  if (row->arity == Arity::Own) return row->expr(o);
  size_t want = row->arity == Arity::Binary ? 2 : 1;
  if (row->arity != Arity::Variadic && args.size() != want)
    return bad(
        kb, n,
        n.op + " takes " + std::to_string(want) + " inputs, got " + std::to_string(args.size()));
  for (const ExprRef& a : args)
    if (!a) return bad(kb, n, n.op + " is missing an input");
  if (std::string why = kindsError(*row, args); !why.empty()) return bad(kb, n, why);
  return row->expr(o);
}

}  // namespace fuselens
