// The loop IR: what one kernel computes, as loops over flat buffers.
//
// A LoopFunc owns its buffers (params: inputs then outputs; temps; embedded
// constants), its scalar variables (loop counters and local accumulators) and a
// statement tree. Expressions are immutable trees shared by pointer; statements
// are mutable so a schedule can change a loop's kind after lowering. Buffers are
// indexed by one flat i64 expression (row-major), which keeps index maps such as
// Reshape free and lets the backend emit one GEP per access. Element types reuse
// core's DType. Buffers hold any dtype; arithmetic runs on the *compute types*
// f32 (also for f16/bf16 data), f64, i64 (every integer width) and bool, the
// way the eager reference computes: a load is widened with a Cast, the result
// is narrowed by a Cast before its store (store() inserts it), so f16 is
// rounded once per op and integers wrap to their width once per op.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/ir/dtype.h"
#include "core/ir/ids.h"
#include "core/ir/tensor.h"

namespace fuselens {

struct BufferTag {};
struct VarTag {};
using BufferId = Id<BufferTag>;
using VarId = Id<VarTag>;

// Temp: heap scratch live during an Allocate. Local: a small fixed-size scratch
// on the stack (a register tile: `cache to local`), which LLVM promotes to
// registers when every access is at a constant offset.
enum class BufferKind { Input, Output, Temp, Constant, Local };

struct Buffer {
  BufferId id;
  std::string name;
  BufferKind kind = BufferKind::Temp;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::shared_ptr<const TensorData> data;  // set for Constant buffers
  // A symbolic kernel's param or run-time-sized temp (codegen/symbolic): its
  // shape as printed and keyed ("[1,d0,256]"), so one kernel serves every value
  // of its dims; `shape` holds the instance's numbers (scratchLayout: last).
  std::string symbolicShape;
  int64_t numel() const;
};

struct Var {
  VarId id;
  std::string name;
  DType type = DType::I64;
};

// ---- expressions ----
enum class ExprKind {
  FloatConst,
  IntConst,
  VarRef,
  Load,
  Binary,
  Unary,
  Compare,
  Select,
  Fma,
  Cast
};
// Div on integers truncates toward zero; Mod is C's % on integers and fmod on
// floats (the sign of the dividend). Pow: floats only. Shl/Shr: integers only;
// Shr is logical on unsigned types (u8, bool) and arithmetic on the others.
enum class BinOp { Add, Sub, Mul, Div, Mod, Max, Min, Pow, Shl, Shr };
// Floor/Ceil/Round (half to even) and the transcendental ones: floats only.
// clang-format off
enum class UnOp { Neg, Exp, Tanh, Sqrt, Abs, Erf, Log, Sin, Cos, Tan, Atan, Floor, Ceil, Round,
                  Sigmoid };  // 1 / (1 + e^-x): one op, so each backend picks a stable form
// clang-format on
enum class CmpOp { LT, LE, GT, GE, EQ, NE };

struct Expr;
using ExprRef = std::shared_ptr<const Expr>;

struct Expr {
  ExprKind kind = ExprKind::IntConst;
  DType type = DType::I64;   // F32 for float math, I64 for indices, Bool for compares
  double f = 0;              // FloatConst
  int64_t i = 0;             // IntConst
  VarId var;                 // VarRef
  BufferId buffer;           // Load
  BinOp bin = BinOp::Add;    // Binary
  UnOp un = UnOp::Neg;       // Unary
  CmpOp cmp = CmpOp::LT;     // Compare
  std::vector<ExprRef> ops;  // Load: {index}; Binary/Compare: {a, b}; Unary: {a}; Select: {c, a,
                             // b}; Fma: {a, b, c} = a * b + c with one rounding; Cast: {a}
};

// Builders fold constants and identities (x + 0, x * 1, 0 * x) so index maps stay readable.
ExprRef floatConst(double v, DType t = DType::F32);
ExprRef intConst(int64_t v);
ExprRef boolConst(bool v);  // an IntConst of type bool
ExprRef varRef(const Var& v);
ExprRef load(const Buffer& b, ExprRef index);
ExprRef binary(BinOp op, ExprRef a, ExprRef b);
ExprRef unary(UnOp op, ExprRef a);
ExprRef compare(CmpOp op, ExprRef a, ExprRef b);
ExprRef select(ExprRef cond, ExprRef a, ExprRef b);
ExprRef fma(ExprRef a, ExprRef b, ExprRef c);  // a * b + c, fused
// Converts a to `to` with the semantics of ONNX Cast as ONNX Runtime runs it on
// x86 (and the eager reference): float -> integer truncates toward zero through
// i64 (NaN -> 0, saturating at the i64 range) then keeps the low bits;
// integer -> integer keeps the low bits (u8 and bool zero-extend); integers go
// to floats through f64; anything -> bool is `!= 0` (NaN -> true); f64 -> f16
// or bf16 rounds through f32; f32 -> f16/bf16 rounds to nearest even. Exact
// widening round trips fold away (f16 -> f32 -> f16 is the f16 value).
ExprRef cast(ExprRef a, DType to);
// The type arithmetic on values of dtype t runs in: f32 for f32/f16/bf16, f64,
// i64 for every integer width, bool.
DType computeType(DType t);
// Bits of an integer dtype (bool: 1); 0 for floats.
int intBits(DType t);
// a (of the compute type of t) rounded as if stored as t and read back: what the
// eager reference's per-op rounding does to an intermediate of dtype t.
ExprRef roundTrip(ExprRef a, DType t);
inline ExprRef add(ExprRef a, ExprRef b) { return binary(BinOp::Add, std::move(a), std::move(b)); }
inline ExprRef sub(ExprRef a, ExprRef b) { return binary(BinOp::Sub, std::move(a), std::move(b)); }
inline ExprRef mul(ExprRef a, ExprRef b) { return binary(BinOp::Mul, std::move(a), std::move(b)); }
inline ExprRef div(ExprRef a, ExprRef b) { return binary(BinOp::Div, std::move(a), std::move(b)); }
bool isIntConst(const ExprRef& e, int64_t v);

// ---- statements ----
enum class StmtKind { Seq, For, Store, Let, Assign, Allocate };
// Vectorized: the body runs as vectors of `extent` lanes when the backend can
// (contiguous or uniform accesses; see llvm_emit.cpp), else a vectorize hint.
// Unrolled: the body is replicated `extent` times with the counter a constant.
enum class ForKind { Serial, Parallel, Vectorized, Unrolled };
std::string_view forKindName(ForKind k);  // "serial", ...

struct Stmt;
using StmtRef = std::shared_ptr<Stmt>;

struct Stmt {
  StmtKind kind = StmtKind::Seq;
  VarId var;           // For: the counter; Let/Assign: the local
  int64_t extent = 0;  // For: iterates var over [0, extent)
  // For: an extent known only at run time (an i64 expression over the kernel's
  // params: a symbolic kernel's dims). When set, code runs [0, runtimeExtent)
  // and `extent` is only this instance's value, for costs.
  ExprRef runtimeExtent;
  ForKind forKind = ForKind::Serial;
  bool pinned = false;        // For: kinds set by a schedule template; applySchedule keeps the nest
  BufferId buffer;            // Store target; Allocate'd temp
  ExprRef index;              // Store
  ExprRef value;              // Store, Let (initial value), Assign
  std::vector<StmtRef> body;  // Seq children; For and Allocate bodies
};

StmtRef seq(std::vector<StmtRef> stmts);
StmtRef forLoop(const Var& v, int64_t extent, std::vector<StmtRef> body);
StmtRef store(const Buffer& b, ExprRef index, ExprRef value);
StmtRef let(const Var& v, ExprRef init);  // declares a mutable local scalar
StmtRef assign(const Var& v, ExprRef value);
StmtRef allocate(const Buffer& b, std::vector<StmtRef> body);  // temp live during body

// ---- functions ----
struct LoopFunc {
  std::string name;
  std::vector<Buffer> buffers;   // indexed by BufferId
  std::vector<Var> vars;         // indexed by VarId
  std::vector<BufferId> params;  // inputs then outputs, the order of the kernel's args
  size_t numInputs = 0;
  StmtRef body;
  // Input params whose data the compiler supplies rather than the graph: constant
  // operands repacked at compile time (a MatMul's B in panels), by BufferId.index.
  std::map<int32_t, std::shared_ptr<const TensorData>> prepacked;

  BufferId addBuffer(std::string name, BufferKind kind, DType dtype, std::vector<int64_t> shape);
  Var addVar(std::string name, DType type);  // by value: later adds move the table
  const Buffer& buffer(BufferId id) const { return buffers[id.index]; }
  const Var& var(VarId id) const { return vars[id.index]; }
};

// Where each Temp buffer lives in the kernel's scratch area (64-byte aligned
// offsets by BufferId.index) and the area's size. A kernel with scratch takes
// its base pointer as one more argument after its params; the runtime provides
// it, so kernels never allocate.
std::map<int32_t, int64_t> scratchLayout(const LoopFunc& f, int64_t* totalBytes);

// C-like text: `for (int64 i0 = 0; i0 < 64; ++i0) { ... }`.
std::string printExpr(const LoopFunc& f, const ExprRef& e);
std::string printLoopFunc(const LoopFunc& f);

}  // namespace fuselens
