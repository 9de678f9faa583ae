// Loop IR -> LLVM IR with IRBuilder. Loops are rotated (guard, then a
// do-while with a phi counter) so LLVM's loop passes see their canonical form;
// locals are entry-block allocas that mem2reg promotes. A Vectorized loop gets
// `llvm.loop.vectorize.enable`, an Unrolled one `llvm.loop.unroll.full`. A
// Parallel loop at the top of a nest is outlined: its body becomes an internal
// function over [lo, hi) that reads every buffer pointer from a context array,
// and the kernel calls the runtime's parallel_for with it.
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

#include <map>
#include <set>

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
      case StmtKind::Store: {
        const Buffer& buf = lf_.buffer(s->buffer);
        llvm::Value* p = b_.CreateInBoundsGEP(type(buf.dtype), bufs_[buf.id.index], expr(s->index));
        b_.CreateStore(expr(s->value), p);
        break;
      }
      case StmtKind::Let:
        b_.CreateStore(expr(s->value), local(s->var));
        break;
      case StmtKind::Assign:
        b_.CreateStore(expr(s->value), local(s->var));
        break;
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
    if (s->forKind == ForKind::Parallel && depth_ == 0 && outline(s)) return;
    emitLoop(s->var, b_.getInt64(0), b_.getInt64(s->extent), s->body, s->forKind);
  }

  void emitAllocate(const StmtRef& s) {
    const Buffer& buf = lf_.buffer(s->buffer);
    llvm::FunctionCallee mallocFn =
        m_.getOrInsertFunction("malloc", b_.getPtrTy(), b_.getInt64Ty());
    llvm::FunctionCallee freeFn = m_.getOrInsertFunction("free", b_.getVoidTy(), b_.getPtrTy());
    int64_t bytes = std::max<int64_t>(1, buf.numel()) * int64_t(dtypeSize(buf.dtype));
    llvm::Value* p = b_.CreateCall(mallocFn, {b_.getInt64(bytes)}, buf.name);
    bufs_[buf.id.index] = p;
    for (const auto& c : s->body) stmt(c);
    b_.CreateCall(freeFn, {p});
    bufs_[buf.id.index] = nullptr;
  }

  // Outlines a parallel loop; false (the caller emits it serially) when the
  // body reads a scalar from outside, which the context array cannot carry.
  bool outline(const StmtRef& s) {
    std::set<int32_t> defined, used;
    freeVars(s, defined, used);
    for (int32_t v : used)
      if (!defined.count(v)) return false;
    llvm::Type* ptrTy = b_.getPtrTy();
    auto* ft =
        llvm::FunctionType::get(b_.getVoidTy(), {ptrTy, b_.getInt64Ty(), b_.getInt64Ty()}, false);
    auto* body = llvm::Function::Create(ft, llvm::Function::InternalLinkage,
                                        fn_->getName() + ".par" + std::to_string(outlined_++), m_);
    body->addFnAttr(llvm::Attribute::NoUnwind);

    size_t n = bufs_.size();
    llvm::IRBuilder<> entry(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
    llvm::Type* arrTy = llvm::ArrayType::get(ptrTy, n);
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
    sub.emitLoop(s->var, body->getArg(1), body->getArg(2), s->body, ForKind::Serial);
    sub.b_.CreateRetVoid();
    if (!sub.err_.isOk()) err_ = sub.err_;

    auto* parTy = llvm::FunctionType::get(b_.getVoidTy(), {ptrTy, ptrTy, b_.getInt64Ty()}, false);
    llvm::FunctionCallee parFor = m_.getOrInsertFunction(kParallelForSymbol, parTy);
    b_.CreateCall(parFor, {body, ctx, b_.getInt64(s->extent)});
    return true;
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
        if (!locals_.count(e->var.index))
          fail("variable " + lf_.var(e->var).name + " read before it is set");
        return b_.CreateLoad(type(e->type), local(e->var));
      }
      case ExprKind::Load: {
        const Buffer& buf = lf_.buffer(e->buffer);
        llvm::Value* base = bufs_[buf.id.index];
        if (!base) {
          fail("buffer " + buf.name + " read outside its allocation");
          return llvm::UndefValue::get(type(e->type));
        }
        llvm::Value* p = b_.CreateInBoundsGEP(type(buf.dtype), base, expr(e->ops[0]));
        return b_.CreateLoad(type(buf.dtype), p);
      }
      case ExprKind::Binary:
        return binary(e->bin, expr(e->ops[0]), expr(e->ops[1]), isFloat(e->type));
      case ExprKind::Unary:
        return unary(e->un, expr(e->ops[0]), isFloat(e->type));
      case ExprKind::Compare:
        return compare(e->cmp, expr(e->ops[0]), expr(e->ops[1]), isFloat(e->ops[0]->type));
      case ExprKind::Select:
        return b_.CreateSelect(expr(e->ops[0]), expr(e->ops[1]), expr(e->ops[2]));
    }
    return nullptr;
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
        return b_.CreateUnaryIntrinsic(llvm::Intrinsic::exp, a);
      case UnOp::Tanh: {
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
  int outlined = 0;
  Emitter e(m, lf, fn, outlined);
  llvm::IRBuilder<>& b = e.builder();
  for (size_t i = 0; i < lf.params.size(); ++i) {
    llvm::Value* slot = b.CreateConstInBoundsGEP1_64(ptrTy, fn->getArg(0), i);
    e.buffers()[lf.params[i].index] = b.CreateLoad(ptrTy, slot, lf.buffer(lf.params[i]).name);
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
