// Software prefetch for loops that stream large buffers.
//
// A fused elementwise chain issues some 30 vector instructions per cache line
// it reads (a sigmoid's exp and reciprocal), so the out-of-order window holds
// only about ten lines ahead of the one being computed and the loads that miss
// do not overlap the arithmetic: the 6-op chain of the bench ran at 63% of
// STREAM copy, its arithmetic alone at a third of the time. Prefetching 4 KiB
// ahead brought a hand-written copy of that loop from 23 to 45 GB/s on two
// threads (copy: 44), with a plateau from 2 to 8 KiB, so the distance is not
// tuned to one host. Stores are left alone: prefetching them for writing
// gained nothing there.
//
// A stream is a load whose index is affine in loop counters only (locals let
// in the body are substituted), steps by one element with the vector lane and
// moves on contiguously with the loop around it, from a buffer of at least
// 512 KiB (smaller ones stay in a core's L2, where the hardware keeps up).
// Two shapes get prefetches:
// - a vector body of L lanes straight inside a rolled loop whose counter
//   steps the index by L: each pass prefetches its L elements' lines 4 KiB
//   ahead (not under an unrolled loop, a register tile's body);
// - a long vectorized loop: emitted in chunks of 64 iterations, each
//   prefetching its lines 4 KiB ahead before running them as a rolled loop
//   of explicit vector bodies (emitVectorSteps says why not LLVM's
//   vectorizer); the extent % 64 last ones follow as a loop LLVM vectorizes.
// Prefetch instructions never fault, so lines past a buffer's end are harmless.
#include <llvm/IR/Intrinsics.h>

#include "codegen/llvm/llvm_emit_internal.h"
#include "codegen/target.h"

namespace fuselens {
namespace llvm_emit_detail {
namespace {

constexpr int64_t kChunk = 64;         // iterations per prefetch group of a long loop
constexpr int64_t kAheadBytes = 4096;  // how far ahead each stream is fetched
constexpr int64_t kMinStreamBytes = 512 << 10;
constexpr int64_t kLineBytes = 64;

void collectLoads(const ExprRef& e, std::vector<ExprRef>& out) {
  if (e->kind == ExprKind::Load) out.push_back(e);
  for (const ExprRef& o : e->ops) collectLoads(o, out);
}

// min(e, c) and max(e, c) read as e: a clamped index (softmax reading the
// next row, min(r + 1, last)) streams like the unclamped one, and a prefetch
// past the clamp is only a hint.
ExprRef unclamped(const ExprRef& e) {
  return sched::mapExprsBottomUp(e, [](const ExprRef& x) {
    if (x->kind == ExprKind::Binary && (x->bin == BinOp::Min || x->bin == BinOp::Max) &&
        x->ops[1]->kind == ExprKind::IntConst)
      return x->ops[0];
    return x;
  });
}

int64_t coefOf(const sched::Affine& a, VarId v) {
  auto it = a.coef.find(v.index);
  return it == a.coef.end() ? 0 : it->second;
}

}  // namespace

// The streams of `body` (straight-line statements only) along `lane`, which
// must step the index by 1, and `outer` (when valid), which must step it by
// `outerStep`. Loads of one buffer whose indices differ by a constant under
// kAheadBytes are one stream (x[i] and x[i + 1]); the next row is another.
std::vector<Emitter::Stream> Emitter::streams(const std::vector<StmtRef>& body, VarId lane,
                                              VarId outer, int64_t outerStep) {
  sched::Subst lets;
  std::vector<Stream> out;
  auto known = [&](BufferId b, const sched::Affine& a, int64_t esize) {
    for (const Stream& o : out)
      if (o.buffer == b && o.index.coef == a.coef &&
          std::abs(o.index.c - a.c) * esize < kAheadBytes)
        return true;
    return false;
  };
  for (const StmtRef& c : body) {
    if (c->kind == StmtKind::For || c->kind == StmtKind::Seq || c->kind == StmtKind::Allocate)
      return {};
    std::vector<ExprRef> loads;
    if (c->index) collectLoads(c->index, loads);
    if (c->value) collectLoads(c->value, loads);
    for (const ExprRef& l : loads) {
      const Buffer& buf = lf_.buffer(l->buffer);
      const int64_t esize = int64_t(dtypeSize(buf.dtype));
      if (buf.kind == BufferKind::Local || !bufs_[buf.id.index] ||
          buf.numel() * esize < kMinStreamBytes)
        continue;
      auto aff = sched::affineOf(unclamped(sched::substitute(l->ops[0], lets)));
      if (!aff || coefOf(*aff, lane) != 1 || known(buf.id, *aff, esize)) continue;
      if (outer.valid() && coefOf(*aff, outer) != outerStep) continue;
      bool counters = true;
      for (auto [v, k] : aff->coef) counters &= v == lane.index || loopVals_.count(v) > 0;
      if (!counters) continue;
      out.push_back({buf.id, *aff, esize});
    }
    if (c->kind == StmtKind::Let) lets[c->var.index] = sched::substitute(c->value, lets);
    if (c->kind == StmtKind::Assign) lets.erase(c->var.index);
  }
  return out;
}

// Prefetches `lines` cache lines of each stream, kAheadBytes past its element
// at `lane` = laneValue (the other counters as they are now).
void Emitter::prefetchStreams(const std::vector<Stream>& ss, VarId lane, llvm::Value* laneValue,
                              int64_t elements) {
  llvm::Function* prefetch =
      llvm::Intrinsic::getDeclaration(&m_, llvm::Intrinsic::prefetch, {b_.getPtrTy()});
  for (const Stream& s : ss) {
    llvm::Value* idx = b_.getInt64(s.index.c);
    for (auto [v, k] : s.index.coef) {
      llvm::Value* val = v == lane.index ? laneValue : loopVals_[v];
      idx = b_.CreateAdd(idx, b_.CreateMul(val, b_.getInt64(k)));
    }
    // Not inbounds: the address may lie past the buffer's end.
    llvm::Value* p = b_.CreateGEP(b_.getInt8Ty(), bufs_[s.buffer.index],
                                  b_.CreateMul(idx, b_.getInt64(s.esize)));
    for (int64_t off = 0; off < std::max<int64_t>(elements * s.esize, 1); off += kLineBytes)
      b_.CreateCall(prefetch, {b_.CreateGEP(b_.getInt8Ty(), p, b_.getInt64(kAheadBytes + off)),
                               b_.getInt32(0), b_.getInt32(3), b_.getInt32(1)});
  }
}

void Emitter::prefetchVectorBody(const StmtRef& s) {
  // Only a body straight inside a rolled loop: under an unrolled one (a
  // register tile), each copy would prefetch, one per FMA in a conv's tile.
  if (enclosing_.empty() || !enclosing_.back().valid()) return;
  const std::vector<Stream> ss = streams(s->body, s->var, enclosing_.back(), s->extent);
  if (!ss.empty()) prefetchStreams(ss, s->var, b_.getInt64(0), s->extent);
}

// A rolled loop of `count` steps at the insert point, its counter its own;
// body(step) emits one step. Returns the back edge, for loop metadata.
llvm::BranchInst* Emitter::countedLoop(const std::string& name, int64_t count,
                                       const std::function<void(llvm::Value*)>& body) {
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  llvm::BasicBlock* header = llvm::BasicBlock::Create(c_, name, fn_);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(c_, name + ".end", fn_);
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  llvm::PHINode* step = b_.CreatePHI(b_.getInt64Ty(), 2);
  step->addIncoming(b_.getInt64(0), pre);
  body(step);
  llvm::Value* next = b_.CreateAdd(step, b_.getInt64(1), "", true, true);
  llvm::BranchInst* br = b_.CreateCondBr(b_.CreateICmpSLT(next, b_.getInt64(count)), header, exit);
  step->addIncoming(next, b_.GetInsertBlock());
  b_.SetInsertPoint(exit);
  return br;
}

bool Emitter::emitStreamedLoop(const StmtRef& s) {
  if (s->runtimeExtent || s->extent < 2 * kChunk || lanes_ > 0) return false;
  const std::vector<Stream> ss = streams(s->body, s->var, VarId(), 0);
  if (ss.empty()) return false;
  const int64_t chunks = s->extent / kChunk;
  std::set<int32_t> declared;
  const int64_t lanes = codegenTarget().vectorLanes();
  const bool steps = lanes >= 4 && kChunk % lanes == 0 && vectorBodyOk(s->body, declared);
  countedLoop(lf_.var(s->var).name + ".chunk", chunks, [&](llvm::Value* chunk) {
    llvm::Value* base = b_.CreateMul(chunk, b_.getInt64(kChunk), "", true, true);
    prefetchStreams(ss, s->var, base, kChunk);
    if (steps)
      emitVectorSteps(s, base, lanes);
    else
      emitLoop(s->var, base, b_.CreateAdd(base, b_.getInt64(kChunk)), s->body, ForKind::Vectorized);
  });
  if (s->extent % kChunk)
    emitLoop(s->var, b_.getInt64(chunks * kChunk), b_.getInt64(s->extent), s->body,
             ForKind::Vectorized);
  return true;
}

// The chunk [base, base + kChunk) as a rolled loop of vector bodies of
// `lanes` lanes. Left to LLVM's vectorizer, a chunk became 4 interleaved
// vectors guarded by a run-time overlap check of input and output: a heavy
// body (the bench's sigmoid chain, 16 constants) then spilled its constants
// to the stack and reloaded them every chunk, and a kernel running in place
// (output over its input, which the memory plan does for elementwise steps)
// failed the check and ran the scalar loop. One vector per step, not
// unrolled, keeps the constants in registers; the lowering's loop is
// parallel by construction, so no check is needed.
void Emitter::emitVectorSteps(const StmtRef& s, llvm::Value* base, int64_t lanes) {
  std::vector<llvm::Constant*> ramp;
  for (int64_t k = 0; k < lanes; ++k) ramp.push_back(b_.getInt64(k));
  llvm::BranchInst* br =
      countedLoop(lf_.var(s->var).name + ".vec", kChunk / lanes, [&](llvm::Value* step) {
        llvm::Value* first =
            b_.CreateAdd(base, b_.CreateMul(step, b_.getInt64(lanes), "", true, true));
        lanes_ = lanes;
        loopVals_[s->var.index] = b_.CreateAdd(b_.CreateVectorSplat(unsigned(lanes), first),
                                               llvm::ConstantVector::get(ramp));
        strideOf_.clear();
        strideOf_[s->var.index] = 1;
        for (const auto& c : s->body) stmt(c);
        loopVals_.erase(s->var.index);
        strideOf_.clear();
        lanes_ = 0;
      });
  br->setMetadata(llvm::LLVMContext::MD_loop, loopHint("llvm.loop.unroll.disable", false));
}

}  // namespace llvm_emit_detail
}  // namespace fuselens
