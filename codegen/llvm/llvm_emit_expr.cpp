// The expressions of the LLVM emitter (see llvm_emit_internal.h): arithmetic,
// casts, comparisons and math calls, uniform or as vectors inside a
// vectorized body, each statement's subexpressions emitted once.
#include "codegen/llvm/llvm_emit_internal.h"

namespace fuselens::llvm_emit_detail {

llvm::Value* Emitter::expr(const ExprRef& e) {
  if (auto it = memo_.find(e.get()); it != memo_.end()) return it->second;
  llvm::Value* v = exprUncached(e);
  memo_[e.get()] = v;
  return v;
}

llvm::Value* Emitter::exprUncached(const ExprRef& e) {
  switch (e->kind) {
    case ExprKind::FloatConst:
      return llvm::ConstantFP::get(type(e->type), e->f);
    case ExprKind::IntConst:
      return llvm::ConstantInt::get(type(e->type), uint64_t(e->i), true);
    case ExprKind::Cast:
      return emitCast(b_, expr(e->ops[0]), e->ops[0]->type, e->type);
    case ExprKind::VarRef: {
      if (auto it = loopVals_.find(e->var.index); it != loopVals_.end()) return it->second;
      if (vecLocals_.count(e->var.index)) {
        auto it = vecAllocas_.find({e->var.index, lanes_});
        if (it == vecAllocas_.end()) {
          fail("variable " + lf_.var(e->var).name + " read before it is set");
          return llvm::UndefValue::get(type(e->type));
        }
        return b_.CreateLoad(it->second->getAllocatedType(), it->second);
      }
      if (!locals_.count(e->var.index))
        fail("variable " + lf_.var(e->var).name + " read before it is set");
      return b_.CreateLoad(type(e->type), local(e->var));
    }
    case ExprKind::Load:
      return emitLoad(e);
    case ExprKind::Binary: {
      auto [a, c] = same(expr(e->ops[0]), expr(e->ops[1]));
      if (!arithmeticOk(e->type)) return a;
      // Index math divides by positive constants: no guard needed there.
      const ExprRef& d = e->ops[1];
      bool safeDivisor = d->kind == ExprKind::IntConst && d->i != 0 && d->i != -1;
      return binary(e->bin, a, c, e->type, safeDivisor);
    }
    case ExprKind::Unary:
      if (!arithmeticOk(e->type)) return expr(e->ops[0]);
      return unary(e->un, expr(e->ops[0]), isFloat(e->type));
    case ExprKind::Compare: {
      auto [a, c] = same(expr(e->ops[0]), expr(e->ops[1]));
      if (!arithmeticOk(e->ops[0]->type)) return b_.getFalse();
      return compare(e->cmp, a, c, e->ops[0]->type);
    }
    case ExprKind::Select: {
      llvm::Value* cond = expr(e->ops[0]);
      auto [a, c] = same(expr(e->ops[1]), expr(e->ops[2]));
      if (cond->getType()->isVectorTy()) a = splat(a), c = splat(c);
      return b_.CreateSelect(cond, a, c);
    }
    case ExprKind::Fma: {
      llvm::Value* a = expr(e->ops[0]);
      llvm::Value* m = expr(e->ops[1]);
      llvm::Value* c = expr(e->ops[2]);
      bool vec =
          a->getType()->isVectorTy() || m->getType()->isVectorTy() || c->getType()->isVectorTy();
      if (vec) a = splat(a), m = splat(m), c = splat(c);
      return b_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {a->getType()}, {a, m, c});
    }
  }
  return nullptr;
}

// Both operands uniform, or both vectors.
std::pair<llvm::Value*, llvm::Value*> Emitter::same(llvm::Value* a, llvm::Value* c) {
  if (a->getType()->isVectorTy() != c->getType()->isVectorTy()) return {splat(a), splat(c)};
  return {a, c};
}

// f16/bf16 values are bits: arithmetic on them is a lowering bug.
bool Emitter::arithmeticOk(DType t) {
  if (t != DType::F16 && t != DType::BF16) return true;
  fail("internal: arithmetic on " + std::string(dtypeName(t)) +
       " values (lowering must widen them to f32)");
  return false;
}

llvm::Value* Emitter::binary(BinOp op, llvm::Value* a, llvm::Value* c, DType t, bool constDivisor) {
  bool fp = isFloat(t);
  bool uns = t == DType::U8 || t == DType::Bool;
  // A zero divisor would trap (and INT_MIN / -1 overflow): x / 0 and x % 0
  // are defined here as x / 1 (eager reports the error instead), x / -1 as -x.
  if (!fp && (op == BinOp::Div || op == BinOp::Mod) && !constDivisor) {
    llvm::Constant* zero = llvm::Constant::getNullValue(c->getType());
    llvm::Constant* one = llvm::ConstantInt::get(c->getType(), 1);
    llvm::Value* bad = b_.CreateICmpEQ(c, zero);
    if (!uns) {
      llvm::Value* m1 = b_.CreateICmpEQ(c, llvm::Constant::getAllOnesValue(c->getType()));
      llvm::Value* q = b_.CreateSDiv(a, b_.CreateSelect(b_.CreateOr(bad, m1), one, c));
      llvm::Value* r = b_.CreateSRem(a, b_.CreateSelect(b_.CreateOr(bad, m1), one, c));
      if (op == BinOp::Div) return b_.CreateSelect(m1, b_.CreateNeg(a), q);
      return b_.CreateSelect(m1, zero, r);
    }
    llvm::Value* safe = b_.CreateSelect(bad, one, c);
    return op == BinOp::Div ? b_.CreateUDiv(a, safe) : b_.CreateURem(a, safe);
  }
  switch (op) {
    case BinOp::Add:
      return fp ? b_.CreateFAdd(a, c) : b_.CreateAdd(a, c);
    case BinOp::Sub:
      return fp ? b_.CreateFSub(a, c) : b_.CreateSub(a, c);
    case BinOp::Mul:
      return fp ? b_.CreateFMul(a, c) : b_.CreateMul(a, c);
    case BinOp::Div:
      return fp ? b_.CreateFDiv(a, c) : uns ? b_.CreateUDiv(a, c) : b_.CreateSDiv(a, c);
    case BinOp::Mod:
      return fp ? b_.CreateFRem(a, c) : uns ? b_.CreateURem(a, c) : b_.CreateSRem(a, c);
    // max(a, b) = a > b ? a : b, the loop IR's definition (NaN in a yields b).
    case BinOp::Max:
      return b_.CreateSelect(fp    ? b_.CreateFCmpOGT(a, c)
                             : uns ? b_.CreateICmpUGT(a, c)
                                   : b_.CreateICmpSGT(a, c),
                             a, c);
    case BinOp::Min:
      return b_.CreateSelect(fp    ? b_.CreateFCmpOLT(a, c)
                             : uns ? b_.CreateICmpULT(a, c)
                                   : b_.CreateICmpSLT(a, c),
                             a, c);
    case BinOp::Pow:
      if (!fp) {
        fail("internal: pow on integers");
        return a;
      }
      return b_.CreateBinaryIntrinsic(llvm::Intrinsic::pow, a, c);
    // Shifts by the width or more give 0 (ONNX leaves them undefined; LLVM's
    // would be poison).
    case BinOp::Shl:
    case BinOp::Shr: {
      if (fp) {
        fail("internal: shift on floats");
        return a;
      }
      unsigned bits = a->getType()->getScalarSizeInBits();
      llvm::Value* big = b_.CreateICmpUGE(c, llvm::ConstantInt::get(c->getType(), bits));
      llvm::Value* sh = b_.CreateSelect(big, llvm::Constant::getNullValue(c->getType()), c);
      llvm::Value* r = op == BinOp::Shl ? b_.CreateShl(a, sh)
                       : uns            ? b_.CreateLShr(a, sh)
                                        : b_.CreateAShr(a, sh);
      return b_.CreateSelect(big, llvm::Constant::getNullValue(a->getType()), r);
    }
  }
  return nullptr;
}

llvm::Value* Emitter::unary(UnOp op, llvm::Value* a, bool fp) {
  switch (op) {
    case UnOp::Neg:
      return fp ? b_.CreateFNeg(a) : b_.CreateNeg(a);
    case UnOp::Exp:
      return emitExp(b_, a);
    case UnOp::Sqrt:
      return b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, a);
    case UnOp::Abs:
      return b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, a);
    case UnOp::Erf:
      return emitErf(b_, a);
    case UnOp::Tanh:
      if (a->getType()->getScalarType()->isFloatTy()) return emitTanh(b_, a);
      return libm("tanh", a);
    case UnOp::Log:
      if (a->getType()->getScalarType()->isFloatTy()) return emitLog(b_, a);
      return b_.CreateUnaryIntrinsic(llvm::Intrinsic::log, a);
    case UnOp::Sin:
      return b_.CreateUnaryIntrinsic(llvm::Intrinsic::sin, a);
    case UnOp::Cos:
      return b_.CreateUnaryIntrinsic(llvm::Intrinsic::cos, a);
    case UnOp::Tan:
      return libm("tan", a);
    case UnOp::Atan:
      return libm("atan", a);
    case UnOp::Floor:
      return b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, a);
    case UnOp::Ceil:
      return b_.CreateUnaryIntrinsic(llvm::Intrinsic::ceil, a);
    case UnOp::Round:
      return b_.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, a);
    case UnOp::Sigmoid:
      return emitSigmoid(b_, a);
  }
  return nullptr;
}

// A libm function (`name` for f64, `name`f for f32), lane by lane on vectors.
llvm::Value* Emitter::libm(const std::string& name, llvm::Value* a) {
  llvm::Type* st = a->getType()->getScalarType();
  llvm::FunctionCallee fn = m_.getOrInsertFunction(st->isFloatTy() ? name + "f" : name, st, st);
  if (auto* f = llvm::dyn_cast<llvm::Function>(fn.getCallee())) {
    f->setDoesNotThrow();
    f->setDoesNotAccessMemory();
  }
  auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(a->getType());
  if (!vt) return b_.CreateCall(fn, {a});
  llvm::Value* out = llvm::UndefValue::get(vt);
  for (unsigned k = 0; k < vt->getNumElements(); ++k)
    out = b_.CreateInsertElement(out, b_.CreateCall(fn, {b_.CreateExtractElement(a, uint64_t(k))}),
                                 uint64_t(k));
  return out;
}

llvm::Value* Emitter::compare(CmpOp op, llvm::Value* a, llvm::Value* c, DType t) {
  using P = llvm::CmpInst::Predicate;
  static const P fps[] = {P::FCMP_OLT, P::FCMP_OLE, P::FCMP_OGT,
                          P::FCMP_OGE, P::FCMP_OEQ, P::FCMP_UNE};
  static const P ints[] = {P::ICMP_SLT, P::ICMP_SLE, P::ICMP_SGT,
                           P::ICMP_SGE, P::ICMP_EQ,  P::ICMP_NE};
  static const P uints[] = {P::ICMP_ULT, P::ICMP_ULE, P::ICMP_UGT,
                            P::ICMP_UGE, P::ICMP_EQ,  P::ICMP_NE};
  int i = static_cast<int>(op);
  if (isFloat(t)) return b_.CreateFCmp(fps[i], a, c);
  bool uns = t == DType::U8 || t == DType::Bool;
  return b_.CreateICmp(uns ? uints[i] : ints[i], a, c);
}

}  // namespace fuselens::llvm_emit_detail
