// The loop IR as C-like text, for the code pane, the CLI and golden tests.
// Buffers print as flat pointers indexed by one row-major expression (exactly
// what the backend emits); a loop's schedule kind is a trailing comment so the
// text stays valid C to read.
#include <cmath>
#include <cstdio>
#include <sstream>

#include "codegen/loop/loop_ir.h"

namespace fuselens {
namespace {

std::string cTypeName(DType t) {
  switch (t) {
    case DType::F32:
      return "float";
    case DType::F64:
      return "double";
    case DType::I64:
      return "int64";
    case DType::I32:
      return "int32";
    case DType::I16:
      return "int16";
    case DType::I8:
      return "int8";
    case DType::U8:
      return "uint8";
    case DType::F16:
      return "half";
    case DType::BF16:
      return "bfloat16";
    case DType::Bool:
      return "bool";
  }
  return std::string(dtypeName(t));  // a dtype the loop IR does not compute in
}

std::string formatFloat(double v, DType t) {
  if (std::isnan(v)) return "NAN";
  if (std::isinf(v)) return v > 0 ? "INFINITY" : "-INFINITY";
  char buf[40];
  std::snprintf(buf, sizeof buf, t == DType::F32 ? "%.9g" : "%.17g", v);
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return t == DType::F32 ? s + "f" : s;
}

std::string shapeText(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

// C precedence, higher binds tighter.
int precedence(const Expr& e) {
  switch (e.kind) {
    case ExprKind::Select:
      return 1;
    case ExprKind::Compare:
      return 2;
    case ExprKind::Binary:
      if (e.bin == BinOp::Add || e.bin == BinOp::Sub) return 3;
      if (e.bin == BinOp::Max || e.bin == BinOp::Min || e.bin == BinOp::Pow) return 6;
      if (e.bin == BinOp::Shl || e.bin == BinOp::Shr) return 2;  // below +, above compares
      return 4;
    case ExprKind::Cast:
      return 5;
    case ExprKind::Unary:
      return e.un == UnOp::Neg ? 5 : 6;
    default:
      return 6;
  }
}

const char* binText(BinOp op) {
  switch (op) {
    case BinOp::Add:
      return " + ";
    case BinOp::Sub:
      return " - ";
    case BinOp::Mul:
      return " * ";
    case BinOp::Div:
      return " / ";
    case BinOp::Mod:
      return " % ";
    case BinOp::Max:
      return "max";
    case BinOp::Min:
      return "min";
    case BinOp::Pow:
      return "pow";
    case BinOp::Shl:
      return " << ";
    case BinOp::Shr:
      return " >> ";
  }
  return "?";
}

const char* cmpText(CmpOp op) {
  switch (op) {
    case CmpOp::LT:
      return " < ";
    case CmpOp::LE:
      return " <= ";
    case CmpOp::GT:
      return " > ";
    case CmpOp::GE:
      return " >= ";
    case CmpOp::EQ:
      return " == ";
    case CmpOp::NE:
      return " != ";
  }
  return "?";
}

const char* unaryName(UnOp op) {
  switch (op) {
    case UnOp::Neg:
      return "-";
    case UnOp::Exp:
      return "exp";
    case UnOp::Tanh:
      return "tanh";
    case UnOp::Sqrt:
      return "sqrt";
    case UnOp::Abs:
      return "fabs";
    case UnOp::Erf:
      return "erf";
    case UnOp::Log:
      return "log";
    case UnOp::Sin:
      return "sin";
    case UnOp::Cos:
      return "cos";
    case UnOp::Tan:
      return "tan";
    case UnOp::Atan:
      return "atan";
    case UnOp::Floor:
      return "floor";
    case UnOp::Ceil:
      return "ceil";
    case UnOp::Round:
      return "roundeven";
    case UnOp::Sigmoid:
      return "sigmoid";
  }
  return "?";
}

class ExprPrinter {
 public:
  explicit ExprPrinter(const LoopFunc& f) : f_(f) {}

  std::string print(const ExprRef& e) {
    switch (e->kind) {
      case ExprKind::FloatConst:
        return formatFloat(e->f, e->type);
      case ExprKind::IntConst:
        if (e->type == DType::Bool) return e->i ? "true" : "false";
        return std::to_string(e->i);
      case ExprKind::Cast:
        return "(" + cTypeName(e->type) + ")" + operand(e->ops[0], 6);
      case ExprKind::VarRef:
        return f_.var(e->var).name;
      case ExprKind::Load:
        return f_.buffer(e->buffer).name + "[" + print(e->ops[0]) + "]";
      case ExprKind::Unary:
        if (e->un == UnOp::Neg) return "-" + operand(e->ops[0], 6);
        return std::string(unaryName(e->un)) + ("(" + print(e->ops[0]) + ")");
      case ExprKind::Binary: {
        if (e->bin == BinOp::Max || e->bin == BinOp::Min || e->bin == BinOp::Pow)
          return std::string(binText(e->bin)) + "(" + print(e->ops[0]) + ", " + print(e->ops[1]) +
                 ")";
        int p = precedence(*e);
        // C groups left to right; a right operand at equal precedence keeps its
        // parentheses, since float + and * are not associative either.
        return operand(e->ops[0], p) + binText(e->bin) + operand(e->ops[1], p + 1);
      }
      case ExprKind::Compare:
        return operand(e->ops[0], 3) + cmpText(e->cmp) + operand(e->ops[1], 3);
      case ExprKind::Select:
        return operand(e->ops[0], 2) + " ? " + operand(e->ops[1], 2) + " : " +
               operand(e->ops[2], 1);
      case ExprKind::Fma:
        return "fma(" + print(e->ops[0]) + ", " + print(e->ops[1]) + ", " + print(e->ops[2]) + ")";
    }
    return "?";
  }

 private:
  std::string operand(const ExprRef& e, int minPrec) {
    std::string s = print(e);
    return precedence(*e) < minPrec ? "(" + s + ")" : s;
  }
  const LoopFunc& f_;
};

class StmtPrinter {
 public:
  explicit StmtPrinter(const LoopFunc& f) : f_(f), exprs_(f) {}

  void print(const StmtRef& s, int depth) {
    std::string pad(2 * depth, ' ');
    switch (s->kind) {
      case StmtKind::Seq:
        for (const auto& c : s->body) print(c, depth);
        break;
      case StmtKind::For: {
        const std::string& v = f_.var(s->var).name;
        out_ << pad << "for (int64 " << v << " = 0; " << v << " < "
             << (s->runtimeExtent ? exprs_.print(s->runtimeExtent) : std::to_string(s->extent))
             << "; ++" << v << ") {";
        if (s->forKind != ForKind::Serial) out_ << "  // " << forKindName(s->forKind);
        out_ << "\n";
        for (const auto& c : s->body) print(c, depth + 1);
        out_ << pad << "}\n";
        break;
      }
      case StmtKind::Store:
        out_ << pad << f_.buffer(s->buffer).name << "[" << exprs_.print(s->index)
             << "] = " << exprs_.print(s->value) << ";\n";
        break;
      case StmtKind::Let: {
        const Var& v = f_.var(s->var);
        out_ << pad << cTypeName(v.type) << " " << v.name << " = " << exprs_.print(s->value)
             << ";\n";
        break;
      }
      case StmtKind::Assign:
        out_ << pad << f_.var(s->var).name << " = " << exprs_.print(s->value) << ";\n";
        break;
      case StmtKind::Allocate: {
        const Buffer& b = f_.buffer(s->buffer);
        if (b.kind == BufferKind::Local && s->runtimeExtent) {
          out_ << pad << cTypeName(b.dtype) << " " << b.name << "["
               << exprs_.print(s->runtimeExtent) << "];  // local " << dtypeName(b.dtype)
               << b.symbolicShape << ", sized at run time (stack)\n";
          for (const auto& c : s->body) print(c, depth);
          break;
        }
        if (b.kind == BufferKind::Local) {
          out_ << pad << cTypeName(b.dtype) << " " << b.name << "[" << b.numel()
               << "];  // local (registers)\n";
          for (const auto& c : s->body) print(c, depth);
          break;
        }
        if (!b.symbolicShape.empty()) {  // sized at run time: the same text at every size
          out_ << pad << cTypeName(b.dtype) << "* " << b.name << " = scratch + "
               << (s->index ? exprs_.print(s->index) : std::string("?")) << ";  // temp "
               << dtypeName(b.dtype) << b.symbolicShape << ", sized at run time\n";
        } else {
          out_ << pad << cTypeName(b.dtype) << "* " << b.name << " = alloc(" << b.numel()
               << " * sizeof(" << cTypeName(b.dtype) << "));  // temp " << dtypeName(b.dtype)
               << shapeText(b.shape) << "\n";
        }
        for (const auto& c : s->body) print(c, depth);
        out_ << pad << "free(" << b.name << ");\n";
        break;
      }
    }
  }
  std::string text() const { return out_.str(); }

 private:
  const LoopFunc& f_;
  ExprPrinter exprs_;
  std::ostringstream out_;
};

std::string constantText(const Buffer& b) {
  std::string s = "  static const " + cTypeName(b.dtype) + " " + b.name + "[" +
                  std::to_string(b.numel()) + "] = {";
  int64_t n = b.data ? b.data->numel() : 0;
  int64_t shown = n > 8 ? 4 : n;
  for (int64_t i = 0; i < shown; ++i) s += (i ? ", " : "") + formatFloat(b.data->at(i), b.dtype);
  if (shown < n) s += ", ... /* " + std::to_string(n) + " values */";
  return s + "};\n";
}

}  // namespace

std::string printExpr(const LoopFunc& f, const ExprRef& e) { return ExprPrinter(f).print(e); }

std::string printLoopFunc(const LoopFunc& f) {
  std::string s = "void " + f.name + "(";
  for (size_t i = 0; i < f.params.size(); ++i) {
    const Buffer& b = f.buffer(f.params[i]);
    s += i ? ", " : "";
    s += (b.kind == BufferKind::Input ? "const " : "") + cTypeName(b.dtype) + "* " + b.name +
         " /*" + (b.symbolicShape.empty() ? shapeText(b.shape) : b.symbolicShape) + "*/";
  }
  s += ") {\n";
  for (const Buffer& b : f.buffers)
    if (b.kind == BufferKind::Constant) s += constantText(b);
  StmtPrinter p(f);
  if (f.body) p.print(f.body, 1);
  return s + p.text() + "}\n";
}

}  // namespace fuselens
