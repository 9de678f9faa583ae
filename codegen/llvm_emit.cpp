// Loop IR -> LLVM IR with IRBuilder. Loops are rotated (guard, then a
// do-while with a phi counter) so LLVM's loop passes see their canonical form;
// locals are entry-block allocas that mem2reg promotes. A Parallel loop at the
// top of a nest is outlined: its body becomes an internal function over
// [lo, hi) that reads every buffer pointer from a context array, and the
// kernel calls the runtime's parallel_for with it.
//
// Vectorized loops of at most kMaxLanes iterations are emitted as vector code
// directly (Halide's vectorize, not a hint): the counter is the ramp <0..n-1>,
// an expression is either uniform (a scalar) or varying (a vector), a load or
// store whose index steps by 1 per lane is one vector access, other varying
// indices gather/scatter, and a local set in the body becomes a vector. This is
// what turns a register tile (a Local buffer indexed by constants after
// unrolling) into FMA on vector registers. Longer Vectorized loops get
// `llvm.loop.vectorize.enable`. Unrolled loops are replicated here with the
// counter a constant, so later passes (SROA) see constant offsets at once.
// exp, tanh, erf, log and every Cast are inlined (llvm_math.cpp), so loops
// that use them still vectorize (a libm call would not).
#include "codegen/llvm_emit.h"

#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Metadata.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <set>

#include "codegen/llvm_math.h"
#include "codegen/target.h"

namespace fuselens {
namespace {

llvm::Type* llvmType(llvm::LLVMContext& c, DType t) {
  switch (t) {
    case DType::F32:
      return llvm::Type::getFloatTy(c);
    case DType::F64:
      return llvm::Type::getDoubleTy(c);
    case DType::I64:
      return llvm::Type::getInt64Ty(c);
    case DType::I32:
      return llvm::Type::getInt32Ty(c);
    case DType::I16:
      return llvm::Type::getInt16Ty(c);
    case DType::I8:
    case DType::U8:
      return llvm::Type::getInt8Ty(c);
    // f16 and bf16 are carried as their bits; casts convert them (arithmetic
    // never runs on them: lowering widens to f32 first).
    case DType::F16:
    case DType::BF16:
      return llvm::Type::getInt16Ty(c);
    case DType::Bool:
      return llvm::Type::getInt1Ty(c);
  }
  return nullptr;
}

// Variables a statement reads but does not define: what outlining would have to capture.
void freeVars(const StmtRef& s, std::set<int32_t>& defined, std::set<int32_t>& used);
void exprVars(const ExprRef& e, std::set<int32_t>& used) {
  if (e->kind == ExprKind::VarRef) used.insert(e->var.index);
  for (const auto& o : e->ops) exprVars(o, used);
}
void freeVars(const StmtRef& s, std::set<int32_t>& defined, std::set<int32_t>& used) {
  if (s->kind == StmtKind::For || s->kind == StmtKind::Let) defined.insert(s->var.index);
  if (s->kind == StmtKind::Assign) used.insert(s->var.index);
  if (s->index) exprVars(s->index, used);
  if (s->value) exprVars(s->value, used);
  for (const auto& c : s->body) freeVars(c, defined, used);
}

constexpr int64_t kMaxLanes = 64;
constexpr int64_t kMaxUnroll = 64;

// Whether a Vectorized loop's body can run as vectors: no heap allocation, no
// parallel loop inside, and no update of a scalar declared outside the body
// (that would be a reduction across lanes).
bool vectorBodyOk(const std::vector<StmtRef>& body, std::set<int32_t>& declared) {
  for (const auto& s : body) {
    switch (s->kind) {
      case StmtKind::Let:
        declared.insert(s->var.index);
        break;
      case StmtKind::Assign:
        if (!declared.count(s->var.index)) return false;
        break;
      case StmtKind::Allocate:
        return false;
      case StmtKind::For:
        if (s->forKind == ForKind::Parallel || s->forKind == ForKind::Vectorized) return false;
        declared.insert(s->var.index);
        if (!vectorBodyOk(s->body, declared)) return false;
        break;
      case StmtKind::Seq:
        if (!vectorBodyOk(s->body, declared)) return false;
        break;
      case StmtKind::Store:
        break;
    }
  }
  return true;
}

class Emitter {
 public:
  Emitter(llvm::Module& m, const LoopFunc& lf, llvm::Function* fn, int& outlined)
      : m_(m),
        c_(m.getContext()),
        lf_(lf),
        fn_(fn),
        b_(c_),
        outlined_(outlined),
        bufs_(lf.buffers.size(), nullptr) {
    b_.SetInsertPoint(llvm::BasicBlock::Create(c_, "entry", fn));
  }

  llvm::IRBuilder<>& builder() { return b_; }
  void setScratch(llvm::Value* base, std::map<int32_t, int64_t> at) {
    scratch_ = base;
    scratchAt_ = std::move(at);
  }
  std::vector<llvm::Value*>& buffers() { return bufs_; }
  const Status& error() const { return err_; }

  void stmt(const StmtRef& s) {
    // Expressions are DAGs (lowering shares subtrees); within one statement
    // there is no control flow, so a shared subtree is emitted once.
    memo_.clear();
    switch (s->kind) {
      case StmtKind::Seq:
        for (const auto& c : s->body) stmt(c);
        break;
      case StmtKind::For:
        emitFor(s);
        break;
      case StmtKind::Store:
        emitStore(s);
        break;
      case StmtKind::Let: {
        llvm::Value* v = expr(s->value);
        // In a vector body a local is a vector only when its value varies by lane;
        // a uniform one (a hoisted index such as `b % 12`) stays a scalar.
        if (lanes_ > 0 && v->getType()->isVectorTy()) {
          vecLocals_.insert(s->var.index);
          if (auto st = laneStride(s->value); st && s->value->type == DType::I64)
            strideOf_[s->var.index] = *st;
        }
        storeLocal(s->var, v);
        break;
      }
      case StmtKind::Assign: {
        llvm::Value* v = expr(s->value);
        if (v->getType()->isVectorTy() && !vecLocals_.count(s->var.index))
          return fail("internal: lane-varying value assigned to the uniform local " +
                      lf_.var(s->var).name);
        storeLocal(s->var, v);
        break;
      }
      case StmtKind::Allocate:
        emitAllocate(s);
        break;
    }
  }

  // Counter var runs over [lo, hi); the body's loops nest inside.
  void emitLoop(VarId var, llvm::Value* lo, llvm::Value* hi, const std::vector<StmtRef>& body,
                ForKind kind) {
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    llvm::BasicBlock* header = llvm::BasicBlock::Create(c_, lf_.var(var).name, fn_);
    llvm::BasicBlock* exit = llvm::BasicBlock::Create(c_, lf_.var(var).name + ".end", fn_);
    b_.CreateCondBr(b_.CreateICmpSLT(lo, hi), header, exit);
    b_.SetInsertPoint(header);
    llvm::PHINode* phi = b_.CreatePHI(b_.getInt64Ty(), 2, lf_.var(var).name);
    phi->addIncoming(lo, pre);
    loopVals_[var.index] = phi;
    ++depth_;
    for (const auto& s : body) stmt(s);
    --depth_;
    llvm::Value* next = b_.CreateAdd(phi, b_.getInt64(1), "", true, true);
    llvm::BranchInst* br = b_.CreateCondBr(b_.CreateICmpSLT(next, hi), header, exit);
    phi->addIncoming(next, b_.GetInsertBlock());
    if (kind == ForKind::Vectorized)
      br->setMetadata(llvm::LLVMContext::MD_loop, loopHint("llvm.loop.vectorize.enable", true));
    if (kind == ForKind::Unrolled)
      br->setMetadata(llvm::LLVMContext::MD_loop, loopHint("llvm.loop.unroll.full", false));
    b_.SetInsertPoint(exit);
    loopVals_.erase(var.index);
  }

 private:
  llvm::Type* type(DType t) {
    llvm::Type* ty = llvmType(c_, t);
    if (!ty) fail("element type " + std::string(dtypeName(t)) + " has no LLVM lowering yet");
    return ty ? ty : b_.getFloatTy();
  }

  void fail(const std::string& msg) {
    if (err_.isOk()) err_ = Status::error(msg, "kernel " + lf_.name);
  }

  llvm::MDNode* loopHint(const char* name, bool withValue) {
    std::vector<llvm::Metadata*> hint = {llvm::MDString::get(c_, name)};
    if (withValue) hint.push_back(llvm::ConstantAsMetadata::get(b_.getTrue()));
    llvm::TempMDTuple self = llvm::MDTuple::getTemporary(c_, llvm::None);
    llvm::MDNode* md = llvm::MDNode::getDistinct(c_, {self.get(), llvm::MDNode::get(c_, hint)});
    md->replaceOperandWith(0, md);
    return md;
  }

  llvm::AllocaInst* local(VarId v) {
    auto it = locals_.find(v.index);
    if (it != locals_.end()) return it->second;
    llvm::IRBuilder<> entry(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
    llvm::AllocaInst* a = entry.CreateAlloca(type(lf_.var(v).type), nullptr, lf_.var(v).name);
    locals_[v.index] = a;
    return a;
  }

  void emitFor(const StmtRef& s) {
    if (s->extent <= 0) return;
    if (s->forKind == ForKind::Parallel && lanes_ == 0 && outline(s)) return;
    if (s->forKind == ForKind::Unrolled && s->extent <= kMaxUnroll) {
      for (int64_t k = 0; k < s->extent; ++k) {
        loopVals_[s->var.index] = b_.getInt64(k);
        for (const auto& c : s->body) stmt(c);
      }
      loopVals_.erase(s->var.index);
      return;
    }
    std::set<int32_t> declared;
    if (s->forKind == ForKind::Vectorized && lanes_ == 0 && s->extent <= kMaxLanes &&
        s->extent >= 2 && vectorBodyOk(s->body, declared)) {
      emitVectorBody(s);
      return;
    }
    emitLoop(s->var, b_.getInt64(0), b_.getInt64(s->extent), s->body,
             lanes_ > 0 && s->forKind == ForKind::Vectorized ? ForKind::Serial : s->forKind);
  }

  // The whole loop as one vector of s->extent lanes.
  void emitVectorBody(const StmtRef& s) {
    lanes_ = s->extent;
    std::vector<llvm::Constant*> ramp;
    for (int64_t k = 0; k < lanes_; ++k) ramp.push_back(b_.getInt64(k));
    loopVals_[s->var.index] = llvm::ConstantVector::get(ramp);
    strideOf_.clear();
    strideOf_[s->var.index] = 1;
    for (const auto& c : s->body) stmt(c);
    loopVals_.erase(s->var.index);
    lanes_ = 0;
    vecLocals_.clear();
    strideOf_.clear();
  }

  // The per-lane step of a varying i64 expression, when it is affine in the lane.
  std::optional<int64_t> laneStride(const ExprRef& e) {
    switch (e->kind) {
      case ExprKind::IntConst:
        return 0;
      case ExprKind::VarRef: {
        auto it = strideOf_.find(e->var.index);
        if (it != strideOf_.end()) return it->second;
        if (vecLocals_.count(e->var.index)) return std::nullopt;
        return 0;
      }
      case ExprKind::Binary: {
        auto a = laneStride(e->ops[0]), c = laneStride(e->ops[1]);
        if (!a || !c) return std::nullopt;
        if (e->bin == BinOp::Add) return *a + *c;
        if (e->bin == BinOp::Sub) return *a - *c;
        if (e->bin == BinOp::Mul && e->ops[1]->kind == ExprKind::IntConst) return *a * e->ops[1]->i;
        if (e->bin == BinOp::Mul && e->ops[0]->kind == ExprKind::IntConst) return *c * e->ops[0]->i;
        if (*a == 0 && *c == 0) return 0;
        return std::nullopt;
      }
      default:
        return std::nullopt;
    }
  }

  llvm::Value* splat(llvm::Value* v) {
    if (lanes_ == 0 || v->getType()->isVectorTy()) return v;
    return b_.CreateVectorSplat(unsigned(lanes_), v);
  }

  void storeLocal(VarId var, llvm::Value* v) {
    if (vecLocals_.count(var.index)) {
      v = splat(v);
      auto it = vecAllocas_.find({var.index, lanes_});
      llvm::AllocaInst* a;
      if (it != vecAllocas_.end()) {
        a = it->second;
      } else {
        llvm::IRBuilder<> entry(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
        a = entry.CreateAlloca(v->getType(), nullptr, lf_.var(var).name);
        vecAllocas_[{var.index, lanes_}] = a;
      }
      b_.CreateStore(v, a);
      return;
    }
    b_.CreateStore(v, local(var));
  }

  // An address per lane, or one address when the index steps by 1 (first: true).
  std::pair<bool, llvm::Value*> address(const Buffer& buf, const ExprRef& index) {
    llvm::Value* idx = expr(index);
    llvm::Type* ty = memType(buf.dtype);
    if (!idx->getType()->isVectorTy())
      return {false, b_.CreateInBoundsGEP(ty, bufs_[buf.id.index], idx)};
    auto stride = laneStride(index);
    if (stride == std::optional<int64_t>(1)) {
      llvm::Value* first = b_.CreateExtractElement(idx, uint64_t(0));
      return {true, b_.CreateInBoundsGEP(ty, bufs_[buf.id.index], first)};
    }
    if (stride == std::optional<int64_t>(0))  // the same address in every lane
      return {false, b_.CreateInBoundsGEP(ty, bufs_[buf.id.index],
                                          b_.CreateExtractElement(idx, uint64_t(0)))};
    return {false, b_.CreateInBoundsGEP(ty, bufs_[buf.id.index], idx)};
  }

  void emitStore(const StmtRef& s) {
    const Buffer& buf = lf_.buffer(s->buffer);
    if (!bufs_[buf.id.index]) return fail("buffer " + buf.name + " written outside its allocation");
    auto [contiguous, p] = address(buf, s->index);
    llvm::Value* v = expr(s->value);
    // Bools are one byte each in memory (a vector of i1 would pack bits).
    if (buf.dtype == DType::Bool) v = b_.CreateZExt(v, widen(v->getType()));
    llvm::Align align(dtypeSize(buf.dtype));
    if (contiguous) {
      b_.CreateAlignedStore(splat(v), p, align);
    } else if (p->getType()->isVectorTy()) {
      b_.CreateMaskedScatter(splat(v), p, align);
    } else {
      // One address for every lane: the last lane's value is the one that stays.
      if (v->getType()->isVectorTy()) v = b_.CreateExtractElement(v, uint64_t(lanes_ - 1));
      b_.CreateAlignedStore(v, p, align);
    }
  }

  llvm::Value* emitLoad(const ExprRef& e) {
    const Buffer& buf = lf_.buffer(e->buffer);
    if (!bufs_[buf.id.index]) {
      fail("buffer " + buf.name + " read outside its allocation");
      return llvm::UndefValue::get(type(e->type));
    }
    auto [contiguous, p] = address(buf, e->ops[0]);
    llvm::Type* ty = memType(buf.dtype);
    llvm::Align align(dtypeSize(buf.dtype));
    llvm::Value* v;
    if (contiguous)
      v = b_.CreateAlignedLoad(llvm::FixedVectorType::get(ty, unsigned(lanes_)), p, align);
    else if (p->getType()->isVectorTy())
      v = b_.CreateMaskedGather(llvm::FixedVectorType::get(ty, unsigned(lanes_)), p, align);
    else
      v = b_.CreateAlignedLoad(ty, p, align);
    if (buf.dtype == DType::Bool) v = b_.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
    return v;
  }

  // The in-memory element type: i8 for bools, else the value type.
  llvm::Type* memType(DType t) { return t == DType::Bool ? b_.getInt8Ty() : type(t); }
  // i1 or <N x i1> widened to bytes.
  llvm::Type* widen(llvm::Type* t) {
    if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(t))
      return llvm::FixedVectorType::get(b_.getInt8Ty(), vt->getNumElements());
    return b_.getInt8Ty();
  }

  void emitAllocate(const StmtRef& s) {
    const Buffer& buf = lf_.buffer(s->buffer);
    if (buf.kind == BufferKind::Local) {
      llvm::IRBuilder<> entry(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
      llvm::AllocaInst* a = entry.CreateAlloca(
          llvm::ArrayType::get(memType(buf.dtype), uint64_t(std::max<int64_t>(1, buf.numel()))),
          nullptr, buf.name);
      a->setAlignment(llvm::Align(64));
      bufs_[buf.id.index] = a;
      for (const auto& c : s->body) stmt(c);
      bufs_[buf.id.index] = nullptr;
      return;
    }
    auto at = scratchAt_.find(buf.id.index);
    if (at == scratchAt_.end() || !scratch_) return fail("temp " + buf.name + " has no scratch");
    llvm::Value* p =
        b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), scratch_, uint64_t(at->second), buf.name);
    bufs_[buf.id.index] = p;
    for (const auto& c : s->body) stmt(c);
    bufs_[buf.id.index] = nullptr;
  }

  // Outlines a parallel loop: its body becomes `<kernel>.par<k>(ctx, lo, hi)`,
  // with every buffer pointer and every enclosing loop counter it reads passed
  // in a context array. False (the caller emits it serially) when the body
  // reads a local scalar from outside, which the context does not carry.
  bool outline(const StmtRef& s) {
    std::set<int32_t> defined, used;
    freeVars(s, defined, used);
    std::vector<int32_t> counters;
    for (int32_t v : used) {
      if (defined.count(v)) continue;
      auto it = loopVals_.find(v);
      if (it == loopVals_.end() || it->second->getType()->isVectorTy()) return false;
      counters.push_back(v);
    }
    llvm::Type* ptrTy = b_.getPtrTy();
    auto* ft =
        llvm::FunctionType::get(b_.getVoidTy(), {ptrTy, b_.getInt64Ty(), b_.getInt64Ty()}, false);
    auto* body = llvm::Function::Create(ft, llvm::Function::InternalLinkage,
                                        fn_->getName() + ".par" + std::to_string(outlined_++), m_);
    body->addFnAttr(llvm::Attribute::NoUnwind);
    copyTargetAttrs(body);

    size_t n = bufs_.size();
    llvm::IRBuilder<> entry(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
    llvm::Type* arrTy = llvm::ArrayType::get(ptrTy, n + counters.size());
    llvm::Value* ctx = entry.CreateAlloca(arrTy, nullptr, "ctx");
    Emitter sub(m_, lf_, body, outlined_);
    llvm::Value* subCtx = body->getArg(0);
    for (size_t j = 0; j < n; ++j) {
      if (!bufs_[j]) continue;
      if (lf_.buffers[j].kind == BufferKind::Constant) {  // a global: visible everywhere
        sub.bufs_[j] = bufs_[j];
        continue;
      }
      b_.CreateStore(bufs_[j], b_.CreateConstInBoundsGEP2_64(arrTy, ctx, 0, j));
      sub.bufs_[j] = sub.b_.CreateLoad(ptrTy, sub.b_.CreateConstInBoundsGEP1_64(ptrTy, subCtx, j),
                                       lf_.buffers[j].name);
    }
    for (size_t c = 0; c < counters.size(); ++c) {
      llvm::Value* v = b_.CreateIntToPtr(loopVals_[counters[c]], ptrTy);
      b_.CreateStore(v, b_.CreateConstInBoundsGEP2_64(arrTy, ctx, 0, n + c));
      llvm::Value* p =
          sub.b_.CreateLoad(ptrTy, sub.b_.CreateConstInBoundsGEP1_64(ptrTy, subCtx, n + c));
      sub.loopVals_[counters[c]] = sub.b_.CreatePtrToInt(p, sub.b_.getInt64Ty());
    }
    sub.emitLoop(s->var, body->getArg(1), body->getArg(2), s->body, ForKind::Serial);
    sub.b_.CreateRetVoid();
    if (!sub.err_.isOk()) err_ = sub.err_;

    auto* parTy = llvm::FunctionType::get(b_.getVoidTy(), {ptrTy, ptrTy, b_.getInt64Ty()}, false);
    llvm::FunctionCallee parFor = m_.getOrInsertFunction(kParallelForSymbol, parTy);
    b_.CreateCall(parFor, {body, ctx, b_.getInt64(s->extent)});
    return true;
  }

  void copyTargetAttrs(llvm::Function* to) {
    for (const char* a :
         {"target-cpu", "target-features", "min-legal-vector-width", "prefer-vector-width"})
      if (fn_->hasFnAttribute(a)) to->addFnAttr(fn_->getFnAttribute(a));
  }

  llvm::Value* expr(const ExprRef& e) {
    if (auto it = memo_.find(e.get()); it != memo_.end()) return it->second;
    llvm::Value* v = exprUncached(e);
    memo_[e.get()] = v;
    return v;
  }

  llvm::Value* exprUncached(const ExprRef& e) {
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
  std::pair<llvm::Value*, llvm::Value*> same(llvm::Value* a, llvm::Value* c) {
    if (a->getType()->isVectorTy() != c->getType()->isVectorTy()) return {splat(a), splat(c)};
    return {a, c};
  }

  // f16/bf16 values are bits: arithmetic on them is a lowering bug.
  bool arithmeticOk(DType t) {
    if (t != DType::F16 && t != DType::BF16) return true;
    fail("internal: arithmetic on " + std::string(dtypeName(t)) +
         " values (lowering must widen them to f32)");
    return false;
  }

  llvm::Value* binary(BinOp op, llvm::Value* a, llvm::Value* c, DType t, bool constDivisor) {
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

  llvm::Value* unary(UnOp op, llvm::Value* a, bool fp) {
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
    }
    return nullptr;
  }

  // A libm function (`name` for f64, `name`f for f32), lane by lane on vectors.
  llvm::Value* libm(const std::string& name, llvm::Value* a) {
    llvm::Type* st = a->getType()->getScalarType();
    llvm::FunctionCallee fn =
        m_.getOrInsertFunction(st->isFloatTy() ? name + "f" : name, st, st);
    if (auto* f = llvm::dyn_cast<llvm::Function>(fn.getCallee())) {
      f->setDoesNotThrow();
      f->setDoesNotAccessMemory();
    }
    auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(a->getType());
    if (!vt) return b_.CreateCall(fn, {a});
    llvm::Value* out = llvm::UndefValue::get(vt);
    for (unsigned k = 0; k < vt->getNumElements(); ++k)
      out = b_.CreateInsertElement(
          out, b_.CreateCall(fn, {b_.CreateExtractElement(a, uint64_t(k))}), uint64_t(k));
    return out;
  }

  llvm::Value* compare(CmpOp op, llvm::Value* a, llvm::Value* c, DType t) {
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

  llvm::Module& m_;
  llvm::LLVMContext& c_;
  const LoopFunc& lf_;
  llvm::Function* fn_;
  llvm::IRBuilder<> b_;
  int& outlined_;
  std::vector<llvm::Value*> bufs_;
  std::map<int32_t, llvm::Value*> loopVals_;
  std::map<int32_t, llvm::AllocaInst*> locals_;
  std::map<const Expr*, llvm::Value*> memo_;  // this statement's emitted subexpressions
  int depth_ = 0;
  llvm::Value* scratch_ = nullptr;        // the kernel's scratch base, when it has one
  std::map<int32_t, int64_t> scratchAt_;  // Temp buffer -> offset in scratch
  int64_t lanes_ = 0;                     // > 0 inside a vector body
  std::set<int32_t> vecLocals_;           // locals set inside the vector body
  std::map<int32_t, int64_t> strideOf_;   // lane step of i64 vars in the vector body
  std::map<std::pair<int32_t, int64_t>, llvm::AllocaInst*> vecAllocas_;
  Status err_;
};

// The bytes of a constant buffer, of any dtype (bools are one byte each).
llvm::Constant* constantData(llvm::LLVMContext& c, const Buffer& b) {
  llvm::Type* elem = b.dtype == DType::Bool ? llvm::Type::getInt8Ty(c) : llvmType(c, b.dtype);
  llvm::StringRef raw(reinterpret_cast<const char*>(b.data->bytes.data()), b.data->bytes.size());
  return llvm::ConstantDataArray::getRaw(raw, uint64_t(b.data->numel()), elem);
}

}  // namespace

Status emitLoopFunc(llvm::Module& m, const LoopFunc& lf) {
  llvm::LLVMContext& c = m.getContext();
  llvm::Type* ptrTy = llvm::PointerType::get(c, 0);
  auto* ft = llvm::FunctionType::get(llvm::Type::getVoidTy(c), {ptrTy}, false);
  auto* fn = llvm::Function::Create(ft, llvm::Function::ExternalLinkage, lf.name, m);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  // Full-width registers for the explicit vectors (some CPUs' tuning prefers 256 bits).
  std::string bits = std::to_string(codegenTarget().vectorBits);
  fn->addFnAttr("min-legal-vector-width", bits);
  fn->addFnAttr("prefer-vector-width", bits);
  int outlined = 0;
  Emitter e(m, lf, fn, outlined);
  llvm::IRBuilder<>& b = e.builder();
  for (size_t i = 0; i < lf.params.size(); ++i) {
    llvm::Value* slot = b.CreateConstInBoundsGEP1_64(ptrTy, fn->getArg(0), i);
    e.buffers()[lf.params[i].index] = b.CreateLoad(ptrTy, slot, lf.buffer(lf.params[i]).name);
  }
  int64_t scratchBytes = 0;
  auto scratchAt = scratchLayout(lf, &scratchBytes);
  if (scratchBytes > 0) {
    llvm::Value* slot = b.CreateConstInBoundsGEP1_64(ptrTy, fn->getArg(0), lf.params.size());
    e.setScratch(b.CreateLoad(ptrTy, slot, "scratch"), std::move(scratchAt));
  }
  for (const Buffer& buf : lf.buffers) {
    if (buf.kind != BufferKind::Constant) continue;
    if (!buf.data || buf.data->dtype != buf.dtype)
      return Status::error("constant " + buf.name + " has no data of its dtype",
                           "kernel " + lf.name);
    llvm::Constant* init = constantData(c, buf);
    e.buffers()[buf.id.index] =
        new llvm::GlobalVariable(m, init->getType(), true, llvm::GlobalValue::PrivateLinkage, init,
                                 lf.name + "." + buf.name);
  }
  if (lf.body) e.stmt(lf.body);
  b.CreateRetVoid();
  FL_RETURN_IF_ERROR(e.error());
  std::string msg;
  llvm::raw_string_ostream os(msg);
  if (llvm::verifyFunction(*fn, &os))
    return Status::error("internal: the LLVM IR does not verify: " + os.str(), "kernel " + lf.name);
  return Status::ok();
}

}  // namespace fuselens
