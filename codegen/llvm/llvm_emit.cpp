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
#include "codegen/llvm/llvm_emit.h"

#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include "codegen/llvm/llvm_emit_internal.h"

namespace fuselens {
namespace llvm_emit_detail {

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

// The bytes of a constant buffer, of any dtype (bools are one byte each).
llvm::Constant* constantData(llvm::LLVMContext& c, const Buffer& b) {
  llvm::Type* elem = b.dtype == DType::Bool ? llvm::Type::getInt8Ty(c) : llvmType(c, b.dtype);
  llvm::StringRef raw(reinterpret_cast<const char*>(b.data->bytes.data()), b.data->bytes.size());
  return llvm::ConstantDataArray::getRaw(raw, uint64_t(b.data->numel()), elem);
}

}  // namespace llvm_emit_detail

using namespace llvm_emit_detail;

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
