// Flops are counted on the expression trees as written: a subexpression used
// twice counts twice (LLVM may share it), index arithmetic (integers) never
// counts, and a select counts its costlier arm only. Good enough to tell a
// compute-bound kernel from a memory-bound one, which is what the count is for.
#include "codegen/loop/loop_cost.h"

#include <algorithm>

namespace fuselens {
namespace {

bool floatMath(DType t) { return t == DType::F32 || t == DType::F64; }

// A math function counts the vector ops its inline sequence issues (see
// codegen/llvm/llvm_math.cpp), a divide or square root the few FMA slots its
// unit blocks: counted as 1, a sigmoid-heavy kernel read as memory-bound at
// half its roof while its instructions were the limit.
double unaryWeight(UnOp op) {
  switch (op) {
    case UnOp::Exp:
      return 16;
    case UnOp::Sigmoid:
      return 22;
    case UnOp::Tanh:
      return 30;
    case UnOp::Erf:
      return 34;
    case UnOp::Log:
      return 26;
    case UnOp::Sin:
    case UnOp::Cos:
    case UnOp::Tan:
    case UnOp::Atan:
      return 20;
    case UnOp::Sqrt:
      return 4;
    default:
      return 1;
  }
}

double exprFlops(const ExprRef& e) {
  if (e->kind == ExprKind::Select)  // one arm runs (padding: the load or the zero)
    return exprFlops(e->ops[0]) + std::max(exprFlops(e->ops[1]), exprFlops(e->ops[2]));
  double n = 0;
  for (const ExprRef& o : e->ops) n += exprFlops(o);
  switch (e->kind) {
    case ExprKind::Binary:
      return n + (floatMath(e->type) ? (e->bin == BinOp::Div ? 4 : 1) : 0);
    case ExprKind::Unary:
      return n + (floatMath(e->type) ? unaryWeight(e->un) : 0);
    case ExprKind::Fma:
      return n + (floatMath(e->type) ? 2 : 0);
    case ExprKind::Compare:
      return n + (!e->ops.empty() && floatMath(e->ops[0]->type) ? 1 : 0);
    default:
      return n;
  }
}

double stmtFlops(const StmtRef& s) {
  double n = s->value ? exprFlops(s->value) : 0;
  for (const StmtRef& c : s->body) n += stmtFlops(c);
  return s->kind == StmtKind::For ? n * double(s->extent) : n;
}

}  // namespace

LoopCost loopCost(const LoopFunc& f) {
  LoopCost c;
  if (f.body) c.flops = stmtFlops(f.body);
  for (BufferId p : f.params) {
    const Buffer& b = f.buffer(p);
    c.bytes += double(b.numel()) * double(dtypeSize(b.dtype));
  }
  return c;
}

}  // namespace fuselens
