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
// exp and tanh are inlined as Cephes-style polynomials, so loops that use them
// still vectorize (a libm call would not).
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
#include <map>
#include <optional>
#include <set>

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
    case DType::Bool:
      return llvm::Type::getInt1Ty(c);
    default:
      return nullptr;
  }
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
        return b_.getInt64(e->i);
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
        return binary(e->bin, a, c, isFloat(e->type));
      }
      case ExprKind::Unary:
        return unary(e->un, expr(e->ops[0]), isFloat(e->type));
      case ExprKind::Compare: {
        auto [a, c] = same(expr(e->ops[0]), expr(e->ops[1]));
        return compare(e->cmp, a, c, isFloat(e->ops[0]->type));
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

  llvm::Value* fconst(llvm::Type* t, double v) { return llvm::ConstantFP::get(t, v); }

  // Cephes expf: exp(x) = 2^n * e^r, |r| <= ln2/2, e^r by a degree-7 polynomial;
  // about 1 ulp. Overflow yields +inf and deep underflow 0, as libm does; NaN
  // stays NaN.
  llvm::Value* emitExp(llvm::Value* x) {
    llvm::Type* t = x->getType();
    llvm::Type* it = llvm::Type::getInt32Ty(c_);
    if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(t))
      it = llvm::FixedVectorType::get(llvm::Type::getInt32Ty(c_), vt->getNumElements());
    if (!t->getScalarType()->isFloatTy()) return b_.CreateUnaryIntrinsic(llvm::Intrinsic::exp, x);
    llvm::Value* hi = fconst(t, 88.3762626647949);
    llvm::Value* lo = fconst(t, -88.3762626647949);
    llvm::Value* xc = b_.CreateSelect(b_.CreateFCmpOGT(x, hi), hi, x);
    xc = b_.CreateSelect(b_.CreateFCmpOLT(xc, lo), lo, xc);
    llvm::Value* fx =
        b_.CreateFAdd(b_.CreateFMul(xc, fconst(t, 1.44269504088896341)), fconst(t, 0.5));
    fx = b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, fx);
    llvm::Value* r = b_.CreateFSub(xc, b_.CreateFMul(fx, fconst(t, 0.693359375)));
    r = b_.CreateFSub(r, b_.CreateFMul(fx, fconst(t, -2.12194440e-4)));
    static const double p[] = {1.9875691500E-4, 1.3981999507E-3, 8.3334519073E-3,
                               4.1665795894E-2, 1.6666665459E-1, 5.0000001201E-1};
    llvm::Value* y = fconst(t, p[0]);
    for (int k = 1; k < 6; ++k)
      y = b_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {t}, {y, r, fconst(t, p[k])});
    llvm::Value* r2 = b_.CreateFMul(r, r);
    y = b_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {t}, {y, r2, r});
    y = b_.CreateFAdd(y, fconst(t, 1.0));
    // fx is in [-128, 128] for every number; NaN becomes 0 so the conversion is
    // defined (y is NaN already). fptosi.sat would scalarize on x86.
    llvm::Value* fxi = b_.CreateSelect(b_.CreateFCmpUNO(fx, fx), fconst(t, 0.0), fx);
    llvm::Value* n = b_.CreateFPToSI(fxi, it);
    n = b_.CreateShl(b_.CreateAdd(n, llvm::ConstantInt::get(it, 127)),
                     llvm::ConstantInt::get(it, 23));
    y = b_.CreateFMul(y, b_.CreateBitCast(n, t));
    y = b_.CreateSelect(b_.CreateFCmpOGT(x, fconst(t, 88.72283935546875)), fconst(t, INFINITY), y);
    return b_.CreateSelect(b_.CreateFCmpOLT(x, fconst(t, -103.972076416015625)), fconst(t, 0.0), y);
  }

  // erf: an odd Taylor polynomial below |x| = 0.5 (error < 1e-8), Abramowitz &
  // Stegun 7.1.26 above (absolute error < 1.5e-7), sign restored by copysign.
  llvm::Value* emitErf(llvm::Value* x) {
    llvm::Type* t = x->getType();
    llvm::Value* ax = b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
    llvm::Value* tt = b_.CreateFDiv(fconst(t, 1.0),
                                    b_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {t},
                                                       {ax, fconst(t, 0.3275911), fconst(t, 1.0)}));
    static const double a[] = {1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592};
    llvm::Value* p = fconst(t, a[0]);
    for (int k = 1; k < 5; ++k)
      p = b_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {t}, {p, tt, fconst(t, a[k])});
    p = b_.CreateFMul(p, tt);
    llvm::Value* e = emitExp(b_.CreateFNeg(b_.CreateFMul(ax, ax)));
    llvm::Value* big = b_.CreateFSub(fconst(t, 1.0), b_.CreateFMul(p, e));
    big = b_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, big, x);
    // 2/sqrt(pi) * (x - x^3/3 + x^5/10 - x^7/42 + x^9/216 - x^11/1320)
    static const double q[] = {-1.0 / 1320, 1.0 / 216, -1.0 / 42, 1.0 / 10, -1.0 / 3, 1.0};
    llvm::Value* z = b_.CreateFMul(x, x);
    llvm::Value* y = fconst(t, q[0]);
    for (int k = 1; k < 6; ++k)
      y = b_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {t}, {y, z, fconst(t, q[k])});
    llvm::Value* small = b_.CreateFMul(b_.CreateFMul(y, x), fconst(t, 1.1283791670955126));
    return b_.CreateSelect(b_.CreateFCmpOLT(ax, fconst(t, 0.5)), small, big);
  }

  // Cephes tanhf: an odd polynomial below |x| = 0.625, 1 - 2 / (e^2|x| + 1) above.
  llvm::Value* emitTanh(llvm::Value* x) {
    llvm::Type* t = x->getType();
    llvm::Value* ax = b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
    llvm::Value* e = emitExp(b_.CreateFMul(ax, fconst(t, 2.0)));
    llvm::Value* big = b_.CreateFSub(
        fconst(t, 1.0), b_.CreateFDiv(fconst(t, 2.0), b_.CreateFAdd(e, fconst(t, 1.0))));
    big = b_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, big, x);
    static const double q[] = {-5.70498872745E-3, 2.06390887954E-2, -5.37397155531E-2,
                               1.33314422036E-1, -3.33332819422E-1};
    llvm::Value* z = b_.CreateFMul(x, x);
    llvm::Value* y = fconst(t, q[0]);
    for (int k = 1; k < 5; ++k)
      y = b_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {t}, {y, z, fconst(t, q[k])});
    llvm::Value* small =
        b_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {t}, {b_.CreateFMul(y, z), x, x});
    return b_.CreateSelect(b_.CreateFCmpOGE(ax, fconst(t, 0.625)), big, small);
  }

  llvm::Value* binary(BinOp op, llvm::Value* a, llvm::Value* c, bool fp) {
    switch (op) {
      case BinOp::Add:
        return fp ? b_.CreateFAdd(a, c) : b_.CreateAdd(a, c);
      case BinOp::Sub:
        return fp ? b_.CreateFSub(a, c) : b_.CreateSub(a, c);
      case BinOp::Mul:
        return fp ? b_.CreateFMul(a, c) : b_.CreateMul(a, c);
      case BinOp::Div:
        return fp ? b_.CreateFDiv(a, c) : b_.CreateSDiv(a, c);
      case BinOp::Mod:
        return fp ? b_.CreateFRem(a, c) : b_.CreateSRem(a, c);
      // max(a, b) = a > b ? a : b, the loop IR's definition (NaN in a yields b).
      case BinOp::Max:
        return b_.CreateSelect(fp ? b_.CreateFCmpOGT(a, c) : b_.CreateICmpSGT(a, c), a, c);
      case BinOp::Min:
        return b_.CreateSelect(fp ? b_.CreateFCmpOLT(a, c) : b_.CreateICmpSLT(a, c), a, c);
    }
    return nullptr;
  }

  llvm::Value* unary(UnOp op, llvm::Value* a, bool fp) {
    switch (op) {
      case UnOp::Neg:
        return fp ? b_.CreateFNeg(a) : b_.CreateNeg(a);
      case UnOp::Exp:
        return emitExp(a);
      case UnOp::Sqrt:
        return b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, a);
      case UnOp::Abs:
        return b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, a);
      case UnOp::Erf:
        return emitErf(a);
      case UnOp::Tanh: {
        if (a->getType()->getScalarType()->isFloatTy()) return emitTanh(a);
        bool f32 = a->getType()->isFloatTy();
        llvm::FunctionCallee fn =
            m_.getOrInsertFunction(f32 ? "tanhf" : "tanh", a->getType(), a->getType());
        if (auto* f = llvm::dyn_cast<llvm::Function>(fn.getCallee())) {
          f->setDoesNotThrow();
          f->setDoesNotAccessMemory();
        }
        return b_.CreateCall(fn, {a});
      }
    }
    return nullptr;
  }

  llvm::Value* compare(CmpOp op, llvm::Value* a, llvm::Value* c, bool fp) {
    using P = llvm::CmpInst::Predicate;
    static const P fps[] = {P::FCMP_OLT, P::FCMP_OLE, P::FCMP_OGT,
                            P::FCMP_OGE, P::FCMP_OEQ, P::FCMP_UNE};
    static const P ints[] = {P::ICMP_SLT, P::ICMP_SLE, P::ICMP_SGT,
                             P::ICMP_SGE, P::ICMP_EQ,  P::ICMP_NE};
    int i = static_cast<int>(op);
    return fp ? b_.CreateFCmp(fps[i], a, c) : b_.CreateICmp(ints[i], a, c);
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

llvm::Constant* constantData(llvm::LLVMContext& c, const Buffer& b) {
  const float* p = b.data->data<float>();
  return llvm::ConstantDataArray::get(c, llvm::ArrayRef<float>(p, size_t(b.data->numel())));
}

}  // namespace

Status emitLoopFunc(llvm::Module& m, const LoopFunc& lf) {
  llvm::LLVMContext& c = m.getContext();
  llvm::Type* ptrTy = llvm::PointerType::get(c, 0);
  auto* ft = llvm::FunctionType::get(llvm::Type::getVoidTy(c), {ptrTy}, false);
  auto* fn = llvm::Function::Create(ft, llvm::Function::ExternalLinkage, lf.name, m);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  // Full-width registers for the explicit vectors (some CPUs' tuning prefers 256 bits).
  std::string bits = std::to_string(hostTarget().vectorBits);
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
    if (buf.dtype != DType::F32 || !buf.data)
      return Status::error("constant " + buf.name + " is not f32 data", "kernel " + lf.name);
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
