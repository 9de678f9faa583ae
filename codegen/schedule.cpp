// The default schedule: a parallel outermost loop for nests with enough work,
// a vectorize hint on innermost loops that store contiguously and carry no
// reduction. Deliberately simple; tiling and a tuner come later.
#include "codegen/schedule.h"

#include <algorithm>
#include <optional>
#include <set>

namespace fuselens {

std::optional<int64_t> strideIn(const ExprRef& e, VarId v) {
  switch (e->kind) {
    case ExprKind::IntConst:
      return 0;
    case ExprKind::VarRef:
      return e->var == v ? 1 : 0;
    case ExprKind::Binary: {
      auto a = strideIn(e->ops[0], v), b = strideIn(e->ops[1], v);
      if (!a || !b) return std::nullopt;
      if (e->bin == BinOp::Add) return *a + *b;
      if (e->bin == BinOp::Sub) return *a - *b;
      if (e->bin == BinOp::Mul) {
        if (e->ops[1]->kind == ExprKind::IntConst) return *a * e->ops[1]->i;
        if (e->ops[0]->kind == ExprKind::IntConst) return *b * e->ops[0]->i;
      }
      // Div, Mod, Max, Min: affine only when v does not occur.
      if (*a == 0 && *b == 0) return 0;
      return std::nullopt;
    }
    default:
      return std::nullopt;  // loads and float math: not index arithmetic
  }
}

namespace {

bool hasLoop(const StmtRef& s) {
  if (s->kind == StmtKind::For) return true;
  for (const auto& c : s->body)
    if (hasLoop(c)) return true;
  return false;
}

// Iterations of the innermost statements, a rough measure of a nest's work.
int64_t work(const StmtRef& s) {
  int64_t sum = s->body.empty() ? 1 : 0;
  for (const auto& c : s->body) sum += work(c);
  return s->kind == StmtKind::For ? s->extent * sum : sum;
}

// An innermost loop whose every store is contiguous in its counter and whose
// body updates no local declared outside it (that would be a reduction).
bool vectorizable(const StmtRef& loop) {
  std::set<int32_t> declared;
  bool anyStore = false;
  for (const auto& s : loop->body) {
    if (s->kind == StmtKind::Let) declared.insert(s->var.index);
    if (s->kind == StmtKind::Assign && !declared.count(s->var.index)) return false;
    if (s->kind == StmtKind::Store) {
      auto stride = strideIn(s->index, loop->var);
      if (!stride || *stride != 1) return false;
      anyStore = true;
    }
  }
  return anyStore;
}

void visit(const StmtRef& s, const Schedule& sched, int depth) {
  if (s->kind == StmtKind::For) {
    bool inner = !std::any_of(s->body.begin(), s->body.end(), hasLoop);
    if (depth == 0 && sched.parallelOuter && s->extent >= 2 && work(s) >= sched.parallelMinWork)
      s->forKind = ForKind::Parallel;
    else if (inner && sched.vectorizeInner && vectorizable(s))
      s->forKind = ForKind::Vectorized;
    else
      s->forKind = ForKind::Serial;
  }
  for (const auto& c : s->body) visit(c, sched, depth + (s->kind == StmtKind::For ? 1 : 0));
}

}  // namespace

void applySchedule(LoopFunc& f, const Schedule& s) {
  if (f.body) visit(f.body, s, 0);
}

}  // namespace fuselens
