// Builders for the loop IR. They fold integer constants and algebraic
// identities at construction, because lowering composes index maps (broadcast,
// transpose, reshape) mechanically and would otherwise print `i0 * 1 + 0`.
#include "codegen/loop/loop_ir.h"

#include <algorithm>
#include <cassert>

namespace fuselens {

int64_t Buffer::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

namespace {

ExprRef make(Expr e) { return std::make_shared<const Expr>(std::move(e)); }

Expr blank(ExprKind kind, DType type) {
  Expr e;
  e.kind = kind;
  e.type = type;
  return e;
}

StmtRef newStmt(StmtKind kind) {
  auto s = std::make_shared<Stmt>();
  s->kind = kind;
  return s;
}

// Operands of one compute type but different storage types (a raw f16 load
// beside an f32 value, an i32 load beside an i64 index) meet in the compute
// type, so a definition that loads a buffer directly still gets arithmetic on
// widened values.
void harmonize(ExprRef& a, ExprRef& b, bool arithmetic = true) {
  bool half = arithmetic && (a->type == DType::F16 || a->type == DType::BF16);
  if (a->type == b->type && !half) return;
  DType ca = computeType(a->type), cb = computeType(b->type);
  if (ca != cb) return;  // a real mismatch: the asserts below report it
  a = cast(a, ca);
  b = cast(b, cb);
}

bool isFloatConst(const ExprRef& e, double v) {
  return e->kind == ExprKind::FloatConst && e->f == v;
}

// Folds integer arithmetic on two constants; nullptr when it cannot.
ExprRef foldInts(BinOp op, int64_t a, int64_t b) {
  switch (op) {
    case BinOp::Add:
      return intConst(a + b);
    case BinOp::Sub:
      return intConst(a - b);
    case BinOp::Mul:
      return intConst(a * b);
    case BinOp::Div:
      return b != 0 ? intConst(a / b) : nullptr;
    case BinOp::Mod:
      return b != 0 ? intConst(a % b) : nullptr;
    case BinOp::Max:
      return intConst(a > b ? a : b);
    case BinOp::Min:
      return intConst(a < b ? a : b);
    default:  // Pow is float-only; shifts are left to the backend
      return nullptr;
  }
}

// Identities that hold for integers and IEEE floats alike (x + 0 is not one for
// floats because of -0, so it is only applied to integers).
ExprRef simplify(BinOp op, const ExprRef& a, const ExprRef& b) {
  bool isInt = a->type == DType::I64;
  if (isInt && a->kind == ExprKind::IntConst && b->kind == ExprKind::IntConst)
    return foldInts(op, a->i, b->i);
  switch (op) {
    case BinOp::Add:
      if (isInt && isIntConst(a, 0)) return b;
      if (isInt && isIntConst(b, 0)) return a;
      break;
    case BinOp::Sub:
      if (isInt && isIntConst(b, 0)) return a;
      break;
    case BinOp::Mul:
      if (isIntConst(a, 1) || isFloatConst(a, 1.0)) return b;
      if (isIntConst(b, 1) || isFloatConst(b, 1.0)) return a;
      if (isInt && (isIntConst(a, 0) || isIntConst(b, 0))) return intConst(0);
      break;
    case BinOp::Div:
      if (isIntConst(b, 1) || isFloatConst(b, 1.0)) return a;
      if (isInt && isIntConst(a, 0)) return intConst(0);
      break;
    case BinOp::Mod:
      if (isIntConst(b, 1) || isIntConst(a, 0)) return intConst(0);
      break;
    default:
      break;
  }
  return nullptr;
}

}  // namespace

bool isIntConst(const ExprRef& e, int64_t v) {
  return e->kind == ExprKind::IntConst && e->type == DType::I64 && e->i == v;
}

ExprRef floatConst(double v, DType t) {
  Expr e = blank(ExprKind::FloatConst, t);
  e.f = v;
  return make(std::move(e));
}

ExprRef intConst(int64_t v) {
  Expr e = blank(ExprKind::IntConst, DType::I64);
  e.i = v;
  return make(std::move(e));
}

ExprRef boolConst(bool v) {
  Expr e = blank(ExprKind::IntConst, DType::Bool);
  e.i = v ? 1 : 0;
  return make(std::move(e));
}

ExprRef varRef(const Var& v) {
  Expr e = blank(ExprKind::VarRef, v.type);
  e.var = v.id;
  return make(std::move(e));
}

ExprRef load(const Buffer& b, ExprRef index) {
  if (index->type != DType::I64 && computeType(index->type) == DType::I64)
    index = cast(index, DType::I64);
  assert(index->type == DType::I64 && "buffer index must be i64");
  Expr e = blank(ExprKind::Load, b.dtype);
  e.buffer = b.id;
  e.ops = {std::move(index)};
  return make(std::move(e));
}

ExprRef binary(BinOp op, ExprRef a, ExprRef b) {
  harmonize(a, b);
  assert(a->type == b->type && "binary operands must have one type");
  if (ExprRef s = simplify(op, a, b)) return s;
  Expr e = blank(ExprKind::Binary, a->type);
  e.bin = op;
  e.ops = {std::move(a), std::move(b)};
  return make(std::move(e));
}

ExprRef unary(UnOp op, ExprRef a) {
  if (a->type == DType::F16 || a->type == DType::BF16) a = cast(a, DType::F32);
  if (op == UnOp::Neg && a->kind == ExprKind::FloatConst) return floatConst(-a->f, a->type);
  Expr e = blank(ExprKind::Unary, a->type);
  e.un = op;
  e.ops = {std::move(a)};
  return make(std::move(e));
}

ExprRef compare(CmpOp op, ExprRef a, ExprRef b) {
  harmonize(a, b);
  assert(a->type == b->type && "compare operands must have one type");
  Expr e = blank(ExprKind::Compare, DType::Bool);
  e.cmp = op;
  e.ops = {std::move(a), std::move(b)};
  return make(std::move(e));
}

ExprRef select(ExprRef cond, ExprRef a, ExprRef b) {
  harmonize(a, b, false);  // choosing between raw f16 values needs no widening
  assert(cond->type == DType::Bool && a->type == b->type && "select needs a bool and one type");
  Expr e = blank(ExprKind::Select, a->type);
  e.ops = {std::move(cond), std::move(a), std::move(b)};
  return make(std::move(e));
}

ExprRef fma(ExprRef a, ExprRef b, ExprRef c) {
  harmonize(a, b);
  harmonize(b, c);
  harmonize(a, b);
  assert(a->type == b->type && b->type == c->type && "fma operands must have one type");
  Expr e = blank(ExprKind::Fma, a->type);
  e.ops = {std::move(a), std::move(b), std::move(c)};
  return make(std::move(e));
}

DType computeType(DType t) {
  switch (t) {
    case DType::F32:
    case DType::F16:
    case DType::BF16:
      return DType::F32;
    case DType::F64:
    case DType::Bool:
      return t;
    default:
      return DType::I64;
  }
}

int intBits(DType t) {
  switch (t) {
    case DType::Bool:
      return 1;
    case DType::I8:
    case DType::U8:
      return 8;
    case DType::I16:
      return 16;
    case DType::I32:
      return 32;
    case DType::I64:
      return 64;
    default:
      return 0;
  }
}

namespace {

// Every value of `from` is a value of `to`, so a cast from -> to loses nothing.
// Cast semantics depend only on the value, so such an inner cast can be dropped.
bool widensExactly(DType from, DType to) {
  if (from == to || from == DType::Bool) return true;
  int fb = intBits(from), tb = intBits(to);
  if (fb > 0 && tb > 0) {
    if (to == DType::U8) return false;  // only bools fit, handled above
    return from == DType::U8 ? tb > 8 : tb > fb;
  }
  if (fb > 0) return (to == DType::F64 && fb <= 32) || (to == DType::F32 && fb <= 16);
  if (from == DType::F16 || from == DType::BF16) return to == DType::F32 || to == DType::F64;
  return from == DType::F32 && to == DType::F64;
}

}  // namespace

ExprRef cast(ExprRef a, DType to) {
  if (a->type == to) return a;
  if (a->kind == ExprKind::Cast && widensExactly(a->ops[0]->type, a->type))
    return cast(a->ops[0], to);
  // Fold constants into the compute types (f16/bf16 rounding is left to the backend).
  bool fromFloat =
      a->kind == ExprKind::FloatConst && (a->type == DType::F32 || a->type == DType::F64);
  bool fromInt = a->kind == ExprKind::IntConst;
  if (fromFloat || fromInt) {
    double v = fromFloat ? a->f : double(a->i);
    if (to == DType::Bool) return boolConst(v != 0);
    if (to == DType::F64) return floatConst(v, DType::F64);
    if (to == DType::F32) return floatConst(double(float(v)), DType::F32);
    if (to == DType::I64 && fromInt) return intConst(a->i);
    if (to == DType::I64 && v == v && v > -9.2e18 && v < 9.2e18) return intConst(int64_t(v));
  }
  Expr e = blank(ExprKind::Cast, to);
  e.ops = {std::move(a)};
  return make(std::move(e));
}

ExprRef roundTrip(ExprRef a, DType t) {
  DType c = computeType(t);
  if (c == t) return a;
  return cast(cast(std::move(a), t), c);
}

std::string_view forKindName(ForKind k) {
  switch (k) {
    case ForKind::Serial:
      return "serial";
    case ForKind::Parallel:
      return "parallel";
    case ForKind::Vectorized:
      return "vectorized";
    case ForKind::Unrolled:
      return "unrolled";
  }
  return "?";
}

StmtRef seq(std::vector<StmtRef> stmts) {
  auto s = newStmt(StmtKind::Seq);
  s->body = std::move(stmts);
  return s;
}

StmtRef forLoop(const Var& v, int64_t extent, std::vector<StmtRef> body) {
  auto s = newStmt(StmtKind::For);
  s->var = v.id;
  s->extent = extent;
  s->body = std::move(body);
  return s;
}

StmtRef store(const Buffer& b, ExprRef index, ExprRef value) {
  // A value of the buffer's compute type is narrowed here, once, as eager does.
  if (value->type != b.dtype && value->type == computeType(b.dtype)) value = cast(value, b.dtype);
  assert(value->type == b.dtype && "stored value must have the buffer's type");
  auto s = newStmt(StmtKind::Store);
  s->buffer = b.id;
  s->index = std::move(index);
  s->value = std::move(value);
  return s;
}

StmtRef let(const Var& v, ExprRef init) {
  auto s = newStmt(StmtKind::Let);
  s->var = v.id;
  s->value = std::move(init);
  return s;
}

StmtRef assign(const Var& v, ExprRef value) {
  auto s = newStmt(StmtKind::Assign);
  s->var = v.id;
  s->value = std::move(value);
  return s;
}

StmtRef allocate(const Buffer& b, std::vector<StmtRef> body) {
  auto s = newStmt(StmtKind::Allocate);
  s->buffer = b.id;
  s->body = std::move(body);
  return s;
}

BufferId LoopFunc::addBuffer(std::string bufName, BufferKind kind, DType dtype,
                             std::vector<int64_t> shape) {
  Buffer b;
  b.id = BufferId(static_cast<int32_t>(buffers.size()));
  b.name = std::move(bufName);
  b.kind = kind;
  b.dtype = dtype;
  b.shape = std::move(shape);
  buffers.push_back(std::move(b));
  return buffers.back().id;
}

std::map<int32_t, int64_t> scratchLayout(const LoopFunc& f, int64_t* totalBytes) {
  std::map<int32_t, int64_t> at;
  int64_t end = 0;
  // Temps sized at run time (a symbolic kernel's) go last: the offsets the
  // code was compiled with then hold at every size.
  for (bool sizedAtRunTime : {false, true})
    for (const Buffer& b : f.buffers) {
      if (b.kind != BufferKind::Temp || b.symbolicShape.empty() != !sizedAtRunTime) continue;
      at[b.id.index] = end;
      end += (std::max<int64_t>(1, b.numel()) * int64_t(dtypeSize(b.dtype)) + 63) / 64 * 64;
    }
  *totalBytes = end;
  return at;
}

Var LoopFunc::addVar(std::string varName, DType type) {
  Var v;
  v.id = VarId(static_cast<int32_t>(vars.size()));
  v.name = std::move(varName);
  v.type = type;
  vars.push_back(std::move(v));
  return vars.back();
}

}  // namespace fuselens
