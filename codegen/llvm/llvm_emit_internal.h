// Internal to the LLVM emitter (llvm_emit.cpp: statements and loops;
// llvm_emit_expr.cpp: expressions): the Emitter that walks one LoopFunc and
// builds its LLVM IR, and the helpers both halves use.
#pragma once

#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Metadata.h>
#include <llvm/IR/Module.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "codegen/llvm/llvm_emit.h"
#include "codegen/llvm/llvm_math.h"
#include "codegen/schedule/schedule_ir_util.h"
#include "codegen/target.h"

namespace fuselens::llvm_emit_detail {

constexpr int64_t kMaxLanes = 64;   // longer Vectorized loops get a vectorize hint instead
constexpr int64_t kMaxUnroll = 64;  // longer Unrolled loops stay loops

llvm::Type* llvmType(llvm::LLVMContext& c, DType t);
// The vars an expression or statement reads (used) and declares (defined).
void exprVars(const ExprRef& e, std::set<int32_t>& used);
void freeVars(const StmtRef& s, std::set<int32_t>& defined, std::set<int32_t>& used);
bool vectorBodyOk(const std::vector<StmtRef>& body, std::set<int32_t>& declared);
// The bytes of a constant buffer, of any dtype (bools are one byte each).
llvm::Constant* constantData(llvm::LLVMContext& c, const Buffer& b);

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
    const size_t gathersBefore = gathers_;
    ++depth_;
    enclosing_.push_back(var);
    for (const auto& s : body) stmt(s);
    enclosing_.pop_back();
    --depth_;
    llvm::Value* next = b_.CreateAdd(phi, b_.getInt64(1), "", true, true);
    llvm::BranchInst* br = b_.CreateCondBr(b_.CreateICmpSLT(next, hi), header, exit);
    phi->addIncoming(next, b_.GetInsertBlock());
    if (kind == ForKind::Vectorized)
      br->setMetadata(llvm::LLVMContext::MD_loop, loopHint("llvm.loop.vectorize.enable", true));
    if (kind == ForKind::Unrolled)
      br->setMetadata(llvm::LLVMContext::MD_loop, loopHint("llvm.loop.unroll.full", false));
    // A serial loop around gathers or scatters (a transposing pack) is left
    // rolled: each is a memory-bound instruction sequence, so copying it gains
    // nothing, while LLVM's full unroll of such a nest made one BERT attention
    // kernel a few hundred gathers that took most of the model's compile time.
    if (kind == ForKind::Serial && gathers_ > gathersBefore)
      br->setMetadata(llvm::LLVMContext::MD_loop, loopHint("llvm.loop.unroll.disable", false));
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
    if (s->runtimeExtent) {  // a symbolic kernel's loop: no constant to unroll or vectorize by
      if (s->forKind == ForKind::Parallel && lanes_ == 0 && outline(s)) return;
      emitLoop(
          s->var, b_.getInt64(0), expr(s->runtimeExtent), s->body,
          s->forKind == ForKind::Vectorized && lanes_ == 0 ? ForKind::Vectorized : ForKind::Serial);
      return;
    }
    if (s->extent <= 0) return;
    if (s->forKind == ForKind::Parallel && lanes_ == 0 && outline(s)) return;
    if (s->forKind == ForKind::Unrolled && s->extent <= kMaxUnroll) {
      // No loop to prefetch along: a vector body in here is a register
      // tile's, one copy per unrolled step (see prefetchVectorBody).
      enclosing_.push_back(VarId());
      for (int64_t k = 0; k < s->extent; ++k) {
        loopVals_[s->var.index] = b_.getInt64(k);
        for (const auto& c : s->body) stmt(c);
      }
      enclosing_.pop_back();
      loopVals_.erase(s->var.index);
      return;
    }
    if (s->forKind == ForKind::Vectorized && s->extent > kMaxLanes && emitStreamedLoop(s)) return;
    std::set<int32_t> declared;
    if (s->forKind == ForKind::Vectorized && lanes_ == 0 && s->extent <= kMaxLanes &&
        s->extent >= 2 && vectorBodyOk(s->body, declared)) {
      emitVectorBody(s);
      return;
    }
    emitLoop(s->var, b_.getInt64(0), b_.getInt64(s->extent), s->body,
             lanes_ > 0 && s->forKind == ForKind::Vectorized ? ForKind::Serial : s->forKind);
  }

  // Software prefetch (llvm_prefetch.cpp). emitStreamedLoop: a long
  // vectorized loop over large buffers, in chunks that prefetch ahead; false
  // when it has no stream worth it. prefetchVectorBody: at the top of a
  // vector body whose enclosing loop walks a large buffer contiguously.
  struct Stream {
    BufferId buffer;
    sched::Affine index;
    int64_t esize = 0;
  };
  bool emitStreamedLoop(const StmtRef& s);
  void emitVectorSteps(const StmtRef& s, llvm::Value* base, int64_t lanes);
  llvm::BranchInst* countedLoop(const std::string& name, int64_t count,
                                const std::function<void(llvm::Value*)>& body);
  void prefetchVectorBody(const StmtRef& s);
  std::vector<Stream> streams(const std::vector<StmtRef>& body, VarId lane, VarId outer,
                              int64_t outerStep);
  void prefetchStreams(const std::vector<Stream>& ss, VarId lane, llvm::Value* laneValue,
                       int64_t elements);

  // The whole loop as one vector of s->extent lanes.
  void emitVectorBody(const StmtRef& s) {
    lanes_ = s->extent;
    std::vector<llvm::Constant*> ramp;
    for (int64_t k = 0; k < lanes_; ++k) ramp.push_back(b_.getInt64(k));
    loopVals_[s->var.index] = llvm::ConstantVector::get(ramp);
    strideOf_.clear();
    strideOf_[s->var.index] = 1;
    prefetchVectorBody(s);
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
      case ExprKind::Load: {  // one address in every lane: a symbolic kernel's dim
        auto a = laneStride(e->ops[0]);
        return a == std::optional<int64_t>(0) ? a : std::nullopt;
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
    } else if (p->getType()->isVectorTy() && slowGather()) {
      llvm::Value* all = splat(v);
      for (int64_t i = 0; i < lanes_; ++i)
        b_.CreateAlignedStore(b_.CreateExtractElement(all, uint64_t(i)),
                              b_.CreateExtractElement(p, uint64_t(i)), align);
      ++gathers_;
    } else if (p->getType()->isVectorTy()) {
      b_.CreateMaskedScatter(splat(v), p, align);
      ++gathers_;
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
    else if (p->getType()->isVectorTy() && slowGather()) {
      v = llvm::UndefValue::get(llvm::FixedVectorType::get(ty, unsigned(lanes_)));
      for (int64_t i = 0; i < lanes_; ++i)
        v = b_.CreateInsertElement(
            v, b_.CreateAlignedLoad(ty, b_.CreateExtractElement(p, uint64_t(i)), align),
            uint64_t(i));
      ++gathers_;
    } else if (p->getType()->isVectorTy()) {
      v = b_.CreateMaskedGather(llvm::FixedVectorType::get(ty, unsigned(lanes_)), p, align);
      ++gathers_;
    } else {
      v = b_.CreateAlignedLoad(ty, p, align);
    }
    if (buf.dtype == DType::Bool)
      v = b_.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
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
    if (buf.kind == BufferKind::Local && s->runtimeExtent) {
      // A symbolic kernel's local sized at run time: on the stack, released
      // after its body so that a loop around it does not grow the stack.
      llvm::Value* saved = b_.CreateCall(
          llvm::Intrinsic::getDeclaration(&m_, llvm::Intrinsic::stacksave), {}, "saved");
      llvm::AllocaInst* a = b_.CreateAlloca(memType(buf.dtype), expr(s->runtimeExtent), buf.name);
      a->setAlignment(llvm::Align(64));
      bufs_[buf.id.index] = a;
      for (const auto& c : s->body) stmt(c);
      bufs_[buf.id.index] = nullptr;
      b_.CreateCall(llvm::Intrinsic::getDeclaration(&m_, llvm::Intrinsic::stackrestore), {saved});
      return;
    }
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
    llvm::Value* p =  // a symbolic kernel's temp sized at run time: its offset too
        s->index ? b_.CreateInBoundsGEP(b_.getInt8Ty(), scratch_, expr(s->index), buf.name)
                 : b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), scratch_, uint64_t(at->second),
                                                 buf.name);
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
    llvm::Value* extent = s->runtimeExtent ? expr(s->runtimeExtent) : b_.getInt64(s->extent);
    b_.CreateCall(parFor, {body, ctx, extent});
    return true;
  }

  // AMD's Zen cores run gather and scatter as microcode: 16 lanes of
  // vgatherdps take ~25 cycles on Zen 4, lane-by-lane loads about half that
  // (an NCHW16c -> NCHW nest: 15.3 -> 12.3 us). Intel's cores keep them.
  // LLVM 14 names Zen 4 "znver3"; an export level ("x86-64-v4") keeps them.
  bool slowGather() {
    if (!slowGather_)
      slowGather_ = fn_->getFnAttribute("target-cpu").getValueAsString().startswith("znver");
    return *slowGather_;
  }

  void copyTargetAttrs(llvm::Function* to) {
    for (const char* a :
         {"target-cpu", "target-features", "min-legal-vector-width", "prefer-vector-width"})
      if (fn_->hasFnAttribute(a)) to->addFnAttr(fn_->getFnAttribute(a));
  }

  // Expressions (llvm_emit_expr.cpp).
  llvm::Value* expr(const ExprRef& e);
  llvm::Value* exprUncached(const ExprRef& e);
  std::pair<llvm::Value*, llvm::Value*> same(llvm::Value* a, llvm::Value* c);
  bool arithmeticOk(DType t);
  llvm::Value* binary(BinOp op, llvm::Value* a, llvm::Value* c, DType t, bool constDivisor);
  llvm::Value* unary(UnOp op, llvm::Value* a, bool fp);
  llvm::Value* libm(const std::string& name, llvm::Value* a);
  llvm::Value* compare(CmpOp op, llvm::Value* a, llvm::Value* c, DType t);

  std::optional<bool> slowGather_;
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
  size_t gathers_ = 0;                    // gathers and scatters so far, lane by lane or not
  llvm::Value* scratch_ = nullptr;        // the kernel's scratch base, when it has one
  std::map<int32_t, int64_t> scratchAt_;  // Temp buffer -> offset in scratch
  int64_t lanes_ = 0;                     // > 0 inside a vector body
  std::vector<VarId> enclosing_;          // counters of the loops being emitted, outermost first
  std::set<int32_t> vecLocals_;           // locals set inside the vector body
  std::map<int32_t, int64_t> strideOf_;   // lane step of i64 vars in the vector body
  std::map<std::pair<int32_t, int64_t>, llvm::AllocaInst*> vecAllocas_;
  Status err_;
};

}  // namespace fuselens::llvm_emit_detail
