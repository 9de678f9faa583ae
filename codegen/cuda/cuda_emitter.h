// Internal to codegen/cuda: the loop IR -> CUDA C statement and expression
// emitter shared by the stage shapes (cuda_c.cpp: grid-stride and single
// thread; cuda_rows.cpp: one block per row; cuda_reduce_split.cpp: long rows
// split across blocks; cuda_matmul.cpp: shared-memory
// tiled MatMul; cuda_conv.cpp: Conv as an implicit GEMM; cuda_vector.cpp: 128-bit vector loads and
// stores).
#pragma once

#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/cuda/cuda_c.h"

namespace fuselens::cudaemit {

// Per-thread arrays (Local buffers, temps allocated inside a parallel loop) live
// in CUDA local memory; beyond this they would spill far past what one thread
// should hold.
inline constexpr int64_t kMaxThreadArray = 16384;
// Constants are embedded in the source; past this a weight would make the .cu
// text and NVRTC's work unreasonably large.
inline constexpr int64_t kMaxEmbeddedElements = int64_t(1) << 20;

inline bool isFloatType(DType t) { return t == DType::F32 || t == DType::F64; }

inline std::string floatLiteral(double v, DType t) {
  const bool f32 = t != DType::F64;
  if (std::isnan(v)) return f32 ? "fl_nanf()" : "((double)fl_nanf())";
  if (std::isinf(v)) {
    std::string inf = f32 ? "fl_inff()" : "((double)fl_inff())";
    return v < 0 ? "(-" + inf + ")" : inf;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, f32 ? "%.9g" : "%.17g", v);
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return f32 ? "(" + s + "f)" : "(" + s + ")";
}

inline std::string intLiteral(int64_t v, DType t) {
  if (t == DType::Bool) return v ? "((fl_bool)1)" : "((fl_bool)0)";
  std::string s = v == INT64_MIN ? "(-9223372036854775807LL - 1)" : std::to_string(v) + "LL";
  return std::string("((") + cudaTypeName(t) + ")" + s + ")";
}

// An int64 literal of the emitted code.
inline std::string ll(int64_t v) { return std::to_string(v) + "LL"; }

// Loop IR queries the stage shapes share.
inline bool readsVar(const ExprRef& e, VarId v) {
  if (e->kind == ExprKind::VarRef && e->var == v) return true;
  for (const ExprRef& o : e->ops)
    if (readsVar(o, v)) return true;
  return false;
}

inline void loadsOf(const ExprRef& e, std::set<int32_t>& out) {
  if (e->kind == ExprKind::Load) out.insert(e->buffer.index);
  for (const ExprRef& o : e->ops) loadsOf(o, out);
}

inline void loadsOf(const StmtRef& s, std::set<int32_t>& out) {
  if (s->index) loadsOf(s->index, out);
  if (s->value) loadsOf(s->value, out);
  for (const StmtRef& c : s->body) loadsOf(c, out);
}

inline bool isZero(const ExprRef& e) {
  return (e->kind == ExprKind::FloatConst && e->f == 0) ||
         (e->kind == ExprKind::IntConst && e->i == 0);
}

class Emitter {
 public:
  Emitter(const LoopFunc& f, std::string prefix) : f_(f), prefix_(std::move(prefix)) {}

  bool failed() const { return !error_.empty(); }
  const std::string& error() const { return error_; }

  std::string buf(BufferId b) const {
    const Buffer& B = f_.buffer(b);
    return B.kind == BufferKind::Constant ? prefix_ + "_c" + std::to_string(b.index)
                                          : "b" + std::to_string(b.index);
  }
  std::string var(VarId v) const { return "v" + std::to_string(v.index); }

  std::string expr(const ExprRef& e) {
    switch (e->kind) {
      case ExprKind::FloatConst:
        return floatLiteral(e->f, e->type);
      case ExprKind::IntConst:
        return intLiteral(e->i, e->type);
      case ExprKind::VarRef:
        return var(e->var);
      case ExprKind::Load:
        if (auto lane = laneLoads_.find(e.get()); lane != laneLoads_.end())
          return lane->second + "[fl_k]";
        return buf(e->buffer) + "[" + expr(e->ops[0]) + "]";
      case ExprKind::Binary:
        return binary(e);
      case ExprKind::Unary:
        return unary(e);
      case ExprKind::Compare: {
        static const char* ops[] = {"<", "<=", ">", ">=", "==", "!="};
        return "((fl_bool)(" + expr(e->ops[0]) + " " + ops[int(e->cmp)] + " " + expr(e->ops[1]) +
               "))";
      }
      case ExprKind::Select:
        return "(" + expr(e->ops[0]) + " ? " + expr(e->ops[1]) + " : " + expr(e->ops[2]) + ")";
      case ExprKind::Fma:
        return std::string(e->type == DType::F64 ? "fma(" : "fmaf(") + expr(e->ops[0]) + ", " +
               expr(e->ops[1]) + ", " + expr(e->ops[2]) + ")";
      case ExprKind::Cast:
        return cast(expr(e->ops[0]), e->ops[0]->type, e->type);
    }
    error_ = "an expression kind the CUDA C emitter does not know";
    return "0";
  }

  std::string cast(const std::string& a, DType from, DType to) {
    if (from == to) return a;
    std::string v = a;
    if (from == DType::F16 || from == DType::BF16) {
      v = std::string(from == DType::F16 ? "fl_h2f(" : "fl_b2f(") + v + ")";
      from = DType::F32;
      if (to == DType::F32) return v;
    }
    if (to == DType::Bool) return "((fl_bool)((" + v + ") != 0))";
    if (to == DType::F16 || to == DType::BF16)
      return std::string(to == DType::F16 ? "fl_f2h(" : "fl_f2b(") + cast(v, from, DType::F32) +
             ")";
    if (isFloatType(to)) {
      if (from == DType::I64 && to == DType::F32) return "((float)(double)(" + v + "))";
      return std::string("((") + cudaTypeName(to) + ")(" + v + "))";
    }
    if (isFloatType(from))
      return std::string("((") + cudaTypeName(to) + ")fl_f2i((double)(" + v + ")))";
    return std::string("((") + cudaTypeName(to) + ")(" + v + "))";
  }

  std::string binary(const ExprRef& e) {
    const std::string a = expr(e->ops[0]), b = expr(e->ops[1]);
    const DType t = e->type;
    const bool fp = isFloatType(t);
    const bool f64 = t == DType::F64;
    auto wrap = [&](const std::string& s) {
      return fp ? s : std::string("((") + cudaTypeName(t) + ")" + s + ")";
    };
    switch (e->bin) {
      case BinOp::Add:
        return wrap("(" + a + " + " + b + ")");
      case BinOp::Sub:
        return wrap("(" + a + " - " + b + ")");
      case BinOp::Mul:
        return wrap("(" + a + " * " + b + ")");
      case BinOp::Div:
        return fp ? "(" + a + " / " + b + ")" : "fl_idiv(" + a + ", " + b + ")";
      case BinOp::Mod:
        return fp ? std::string(f64 ? "fmod(" : "fmodf(") + a + ", " + b + ")"
                  : "fl_imod(" + a + ", " + b + ")";
      case BinOp::Max:
        return "fl_max(" + a + ", " + b + ")";
      case BinOp::Min:
        return "fl_min(" + a + ", " + b + ")";
      case BinOp::Pow:
        return std::string(f64 ? "pow(" : "powf(") + a + ", " + b + ")";
      case BinOp::Shl:
        return "fl_shl(" + a + ", " + b + ")";
      case BinOp::Shr:
        return "fl_shr(" + a + ", " + b + ")";
    }
    return "0";
  }

  std::string unary(const ExprRef& e) {
    const std::string a = expr(e->ops[0]);
    const DType t = e->type;
    if (!isFloatType(t)) {
      if (e->un == UnOp::Neg) return std::string("((") + cudaTypeName(t) + ")(-" + a + "))";
      if (e->un == UnOp::Abs) return "fl_iabs(" + a + ")";
      if (e->un == UnOp::Floor || e->un == UnOp::Ceil || e->un == UnOp::Round) return a;
      error_ = "a float-only unary op on an integer in the loop IR";
      return "0";
    }
    if (e->un == UnOp::Neg) return "(-" + a + ")";
    if (e->un == UnOp::Sigmoid)
      return t == DType::F64 ? "(1.0 / (1.0 + exp(-" + a + ")))"
                             : "(1.0f / (1.0f + expf(-" + a + ")))";
    const char* n = nullptr;
    switch (e->un) {
      case UnOp::Neg:
      case UnOp::Sigmoid:
        break;
      case UnOp::Exp:
        n = "exp";
        break;
      case UnOp::Tanh:
        n = "tanh";
        break;
      case UnOp::Sqrt:
        n = "sqrt";
        break;
      case UnOp::Abs:
        n = "fabs";
        break;
      case UnOp::Erf:
        n = "erf";
        break;
      case UnOp::Log:
        n = "log";
        break;
      case UnOp::Sin:
        n = "sin";
        break;
      case UnOp::Cos:
        n = "cos";
        break;
      case UnOp::Tan:
        n = "tan";
        break;
      case UnOp::Atan:
        n = "atan";
        break;
      case UnOp::Floor:
        n = "floor";
        break;
      case UnOp::Ceil:
        n = "ceil";
        break;
      case UnOp::Round:
        n = "rint";
        break;  // half to even in the default rounding mode
    }
    if (!n) {
      error_ = "a unary op the CUDA C emitter does not know";
      return "0";
    }
    return std::string(n) + (t == DType::F64 ? "" : "f") + "(" + a + ")";
  }

  // Statements, `ind` levels deep. `perThread` is set inside a parallel stage's
  // loop: a temp allocated there belongs to the thread.
  void stmt(const StmtRef& s, int ind, std::ostringstream& o) {
    const std::string pad(size_t(ind) * 2, ' ');
    switch (s->kind) {
      case StmtKind::Seq:
        for (const StmtRef& c : s->body) stmt(c, ind, o);
        return;
      case StmtKind::For:
        if (s->forKind == ForKind::Unrolled) o << pad << "#pragma unroll\n";
        o << pad << "for (fl_i64 " << var(s->var) << " = 0; " << var(s->var) << " < " << s->extent
          << "LL; ++" << var(s->var) << ") {\n";
        for (const StmtRef& c : s->body) stmt(c, ind + 1, o);
        o << pad << "}\n";
        return;
      case StmtKind::Store:
        if (auto lane = laneStores_.find(s.get()); lane != laneStores_.end()) {
          o << pad << lane->second << "[fl_k] = " << expr(s->value) << ";\n";
          return;
        }
        o << pad << buf(s->buffer) << "[" << expr(s->index) << "] = " << expr(s->value) << ";\n";
        return;
      case StmtKind::Let:
        o << pad << cudaTypeName(f_.var(s->var).type) << " " << var(s->var) << " = "
          << expr(s->value) << ";\n";
        return;
      case StmtKind::Assign:
        o << pad << var(s->var) << " = " << expr(s->value) << ";\n";
        return;
      case StmtKind::Allocate: {
        const Buffer& b = f_.buffer(s->buffer);
        if (!inScratch_.count(b.id.index)) {
          if (b.numel() > kMaxThreadArray) {
            error_ = "temp buffer '" + b.name + "' (" + std::to_string(b.numel()) +
                     " elements) is allocated inside a parallel loop: too large for one thread";
            return;
          }
          o << pad << cudaTypeName(b.dtype) << " " << buf(b.id) << "[" << b.numel() << "];\n";
        }
        for (const StmtRef& c : s->body) stmt(c, ind, o);
        return;
      }
    }
  }

  // Top-level statements, with the temps their Allocates make (global scratch).
  void flatten(const StmtRef& s, std::vector<StmtRef>& out) {
    if (s->kind == StmtKind::Seq) {
      for (const StmtRef& c : s->body) flatten(c, out);
    } else if (s->kind == StmtKind::Allocate) {
      inScratch_.insert(s->buffer.index);
      for (const StmtRef& c : s->body) flatten(c, out);
    } else {
      out.push_back(s);
    }
  }

  std::set<int32_t> inScratch_;
  // Set while a vectorized stage (cuda_vector.cpp) emits its per-lane body:
  // these loads and stores use lane fl_k of a register array that the stage
  // fills from, or writes to, memory with 128-bit accesses.
  std::map<const Expr*, std::string> laneLoads_;
  std::map<const Stmt*, std::string> laneStores_;

 private:
  const LoopFunc& f_;
  std::string prefix_;
  std::string error_;
};

// Emits the top-level parallel loop `top` as a shared-memory tiled MatMul
// stage (cuda_matmul.cpp) and sets the stage's grid and block; false, with
// nothing written, when the loop nest is not a contraction it recognizes.
bool emitTiledMatMul(const LoopFunc& f, Emitter& em, const StmtRef& top, std::ostringstream& o,
                     CudaStage& st);

// Emits the top-level parallel loop `top`, a Conv's implicit-GEMM nest, as a
// shared-memory tiled stage or one thread per output (cuda_conv.cpp) and
// sets the stage's grid and block; false, with nothing written, for any
// other nest.
bool emitConvStage(const LoopFunc& f, Emitter& em, const StmtRef& top, std::ostringstream& o,
                   CudaStage& st);

// Emits the top-level parallel loop `row` as a one-block-per-row stage
// (cuda_rows.cpp) and sets the stage's grid and block; false, with nothing
// written, when the loop does not have the row-reduction shape.
bool emitBlockRows(const LoopFunc& f, Emitter& em, const StmtRef& row, std::ostringstream& o,
                   CudaStage& st);

// One stage of a split reduction: its body (inside the braces) and launch.
struct SplitStage {
  std::string body;
  CudaStage stage;
};

// Emits `top` (a parallel row loop, or a kernel body without one) as a
// reduction split across blocks, one stage per reduction and one for the
// results (cuda_reduce_split.cpp), named `name`_p0, _p1, ...; its partials
// go in fl_scratch from *scratchBytes on, which it advances. False, with
// nothing written, unless the rows are few and long.
bool emitSplitReduction(const LoopFunc& f, Emitter& em, const StmtRef& top, const std::string& name,
                        int64_t* scratchBytes, std::vector<SplitStage>* out);

// Emits the top-level parallel loop `top` as a stage whose threads take 16
// bytes of consecutive elements each, with 128-bit loads and stores
// (cuda_vector.cpp), and sets the stage's grid and block; false, with nothing
// written, when the loop is not an elementwise nest with a contiguous access.
bool emitVectorized(const LoopFunc& f, Emitter& em, const StmtRef& top, std::ostringstream& o,
                    CudaStage& st);

}  // namespace fuselens::cudaemit
