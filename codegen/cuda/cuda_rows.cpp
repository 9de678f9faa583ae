// The GPU schedule for row reductions (softmax, LayerNorm, Reduce* over the
// last axes): a parallel loop over rows whose body reduces along the row and
// then writes it becomes one block per row, the block's threads striding the
// row. The loop IR of such a row reads
//
//   for row (parallel):                 for (row = blockIdx.x; row < R; row += gridDim.x)
//     let m = -inf                        m = -inf
//     for j: m = max(m, x[row, j])   ->   for (j = threadIdx.x; j < N; j += blockDim.x) m = max(m,
//     ...)
//                                         m = fl_block_max(m)   // warp shuffles, then shared
//                                         memory
//     let s = 0                           ...
//     for j: s = s + exp(x - m)
//     for j: y[row, j] = exp(x - m) / s   for (j = threadIdx.x; ...) y[...] = ...
//     y2[row] = s                         if (threadIdx.x == 0) y2[row] = s
//
// A reduction loop is lets and then one statement `acc = acc op e` (op add,
// max or min; an add starts from 0, since every thread starts its partial
// from the initial value); row loops may nest (LayerNorm's n, then c); a map loop holds only stores
// and lets, into buffers the row never reads, so its iterations are independent. Anything else
// keeps the one-thread-per-row stage of cuda_c.cpp.
#include <map>

#include "codegen/cuda/cuda_row_steps.h"

namespace fuselens::cudaemit {
namespace {

// The row loops: the parallel loop and the serial loops that are each the
// only statement of the one above (LayerNorm over [N, C, L] rows: n, then c).
std::vector<StmtRef> rowLoops(const StmtRef& top) {
  std::vector<StmtRef> loops = {top};
  while (loops.back()->body.size() == 1) {
    const StmtRef& inner = loops.back()->body[0];
    if (inner->kind != StmtKind::For || inner->forKind == ForKind::Parallel) break;
    // An inner loop that is itself the reduction is the row, not a row loop.
    if (inner->body.size() == 1 && inner->body[0]->kind != StmtKind::For) break;
    loops.push_back(inner);
  }
  return loops;
}

}  // namespace

const char* blockReduce(BinOp op) {
  switch (op) {
    case BinOp::Add:
      return "fl_block_sum";
    case BinOp::Max:
      return "fl_block_max";
    case BinOp::Min:
      return "fl_block_min";
    default:
      return nullptr;
  }
}

std::vector<StmtRef> nestOf(const StmtRef& s) {
  std::vector<StmtRef> loops = {s};
  while (loops.back()->body.size() == 1 && loops.back()->body[0]->kind == StmtKind::For &&
         loops.back()->body[0]->forKind != ForKind::Parallel)
    loops.push_back(loops.back()->body[0]);
  return loops;
}

std::vector<Step> rowSteps(const LoopFunc& f, const std::vector<StmtRef>& body) {
  std::set<int32_t> loaded;
  for (const StmtRef& s : body) loadsOf(s, loaded);
  std::map<int32_t, ExprRef> lets;  // var -> initial value
  std::vector<Step> steps;
  bool reduces = false;
  for (const StmtRef& s : body) {
    if (s->kind == StmtKind::Let || s->kind == StmtKind::Assign) {
      if (s->kind == StmtKind::Let) lets[s->var.index] = s->value;
      steps.push_back({s->kind == StmtKind::Let ? Shape::Let : Shape::Assign, s});
      continue;
    }
    if (s->kind == StmtKind::Store) {
      if (loaded.count(s->buffer.index)) return {};
      steps.push_back({Shape::Store, s});
      continue;
    }
    if (s->kind != StmtKind::For || s->forKind == ForKind::Parallel) return {};
    Step step{Shape::Map, s, nestOf(s)};
    for (const StmtRef& l : step.nest) step.extent *= l->extent;
    const std::vector<StmtRef>& inner = step.nest.back()->body;
    if (inner.empty()) {  // nothing to do per element: a map of nothing
      steps.push_back(step);
      continue;
    }
    const StmtRef& a = inner.back();
    bool letsThenAssign = a->kind == StmtKind::Assign;
    for (size_t i = 0; letsThenAssign && i + 1 < inner.size(); ++i)
      letsThenAssign = inner[i]->kind == StmtKind::Let && !readsVar(inner[i]->value, a->var);
    if (letsThenAssign) {
      const ExprRef& v = a->value;
      const DType t = f.var(a->var).type;
      if (v->kind != ExprKind::Binary || !blockReduce(v->bin) || !lets.count(a->var.index) ||
          !(t == DType::F32 || t == DType::F64 || t == DType::I32 || t == DType::I64))
        return {};
      const bool left = v->ops[0]->kind == ExprKind::VarRef && v->ops[0]->var == a->var;
      const bool right = v->ops[1]->kind == ExprKind::VarRef && v->ops[1]->var == a->var;
      if (!left && !right) return {};
      if (readsVar(left ? v->ops[1] : v->ops[0], a->var)) return {};
      // Every chunk starts from the initial value.
      if (v->bin == BinOp::Add && !isZero(lets[a->var.index])) return {};
      step.shape = Shape::Reduce;
      step.op = v->bin;
      step.acc = a->var;
      reduces = true;
    } else {
      for (const StmtRef& c : inner)
        if ((c->kind != StmtKind::Store && c->kind != StmtKind::Let) ||
            (c->kind == StmtKind::Store && loaded.count(c->buffer.index)))
          return {};
    }
    steps.push_back(step);
  }
  if (!reduces) return {};
  return steps;
}

bool emitBlockRows(const LoopFunc& f, Emitter& em, const StmtRef& row, std::ostringstream& o,
                   CudaStage& st) {
  for (const Buffer& b : f.buffers)
    if (b.kind == BufferKind::Local) return false;  // per-thread arrays: a row is not one thread
  const std::vector<StmtRef> chain = rowLoops(row);
  std::vector<Step> steps;
  size_t used = chain.size();
  for (; used > 0 && steps.empty(); --used) {
    steps = rowSteps(f, chain[used - 1]->body);
    // A block strides one loop per step here; nests are the split stage's.
    for (const Step& s : steps)
      if (s.nest.size() > 1) steps.clear();
  }
  if (steps.empty()) return false;
  ++used;  // the loop count that gave the steps
  int64_t rows = 1, longest = 1;
  for (size_t i = 0; i < used; ++i) rows *= chain[i]->extent;
  for (const Step& s : steps)
    if (s.shape == Shape::Reduce || s.shape == Shape::Map)
      longest = std::max(longest, s.stmt->extent);
  // A thread per row already fills the GPU when rows are many and short (a
  // large GEMM's outputs over a short K); a block per row pays off on long
  // rows, or when there are too few rows for a thread each to fill the SMs.
  if (rows >= 8192 && longest < 256) return false;
  // Whole warps (the shuffles assume full ones), as many as the row can use, at most 8.
  st.block = std::min<int64_t>(256, (longest + 31) / 32 * 32);
  st.extent = rows;
  st.grid = std::min<int64_t>(std::max<int64_t>(rows, 1), 65535);
  o << "  // one block per row: the threads stride the row, reductions end in the block\n"
    << "  for (fl_i64 fl_row = blockIdx.x; fl_row < " << rows << "LL; fl_row += gridDim.x) {\n";
  int64_t inner = rows;
  for (size_t i = 0; i < used; ++i) {
    inner /= chain[i]->extent;
    o << "    const fl_i64 " << em.var(chain[i]->var) << " = fl_row / " << inner << "LL % "
      << chain[i]->extent << "LL;\n";
  }
  for (const Step& s : steps) {
    if (s.shape == Shape::Let || s.shape == Shape::Assign) {
      em.stmt(s.stmt, 2, o);
    } else if (s.shape == Shape::Store) {
      o << "    if (threadIdx.x == 0) {\n";
      em.stmt(s.stmt, 3, o);
      o << "    }\n";
    } else {
      const std::string j = em.var(s.stmt->var);
      o << "    for (fl_i64 " << j << " = threadIdx.x; " << j << " < " << s.stmt->extent << "LL; "
        << j << " += blockDim.x) {\n";
      for (const StmtRef& c : s.stmt->body) em.stmt(c, 3, o);
      o << "    }\n";
      if (s.shape == Shape::Reduce) {
        const std::string acc = em.var(s.stmt->body.back()->var);
        o << "    " << acc << " = " << blockReduce(s.op) << "(" << acc << ");\n";
      }
    }
  }
  o << "  }\n";
  return !em.failed();
}

}  // namespace fuselens::cudaemit
