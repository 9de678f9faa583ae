// The default schedule as steps, chosen per nest from its shape:
//
//   multi-anchor groups (a temp one nest fills row by row and a later nest
//   reads per row: two reductions over the same rows, a norm's statistics),
//   when the kernel runs at least parallelMinWork iterations:
//       compute_at(temp, reader's row loop)   -> one nest, a per-row local
//   every nest (elementwise, broadcast, injective, reduce, row ops):
//       parallel(outermost)     when it runs >= parallelMinWork iterations
//       vectorize(innermost)    when its stores are contiguous, no reduction
//
// The kinds are set without the primitives' dependence checks: lowering builds
// every nest so that its outermost loop writes disjoint elements, which the
// conservative checks cannot always see (a store through a div/mod index).
// Nests a template pinned (MatMul/Conv tiling, lane reductions) keep theirs.
#include <algorithm>
#include <set>

#include "codegen/schedule/index_simplify.h"
#include "codegen/schedule/schedule.h"
#include "codegen/schedule/schedule_ir_util.h"

namespace fuselens {
namespace {

using namespace sched;

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

class Kinds {
 public:
  Kinds(const LoopFunc& f, const Schedule& s, std::vector<ScheduleStep>& steps)
      : f_(f), s_(s), steps_(steps) {}

  void visit(const StmtRef& st, int depth) {
    if (st->kind == StmtKind::For && st->pinned) return;
    if (st->kind == StmtKind::For) {
      bool inner = !std::any_of(st->body.begin(), st->body.end(), hasLoop);
      const std::string& name = f_.var(st->var).name;
      if (depth == 0 && s_.parallelOuter && s_.threads != 1 && st->extent >= 2 &&
          work(st) >= s_.parallelMinWork) {
        st->forKind = ForKind::Parallel;
        steps_.push_back({"parallel", name, {}, 0, ""});
      } else if (inner && s_.vectorizeInner && vectorizable(st)) {
        st->forKind = ForKind::Vectorized;
        steps_.push_back({"vectorize", name, {}, 0, ""});
      } else {
        st->forKind = ForKind::Serial;
      }
    }
    for (const auto& c : st->body) visit(c, depth + (st->kind == StmtKind::For ? 1 : 0));
  }

 private:
  const LoopFunc& f_;
  const Schedule& s_;
  std::vector<ScheduleStep>& steps_;
};

// Temps allocated around the whole kernel, each tried at its reader's outer
// loops, outermost first; computeAt changes nothing when it refuses.
void computeAtRows(LoopFunc& f, std::vector<ScheduleStep>& steps) {
  std::vector<BufferId> temps;
  walk(f.body, [&](const StmtRef& s) {
    if (s->kind == StmtKind::Allocate && f.buffer(s->buffer).kind == BufferKind::Temp)
      temps.push_back(s->buffer);
  });
  // Latest temp first: moving the last writer into its reader's row loop
  // leaves that loop the only reader of the earlier temps, which then move too.
  std::reverse(temps.begin(), temps.end());
  for (BufferId t : temps) {
    // The reader: the first nest after the writer that loads t.
    std::vector<std::string> candidates;
    walk(f.body, [&](const StmtRef& s) {
      if (!candidates.empty() || s->kind != StmtKind::For) return;
      bool reads = false;
      walk(s, [&](const StmtRef& x) {
        forEachExpr(x, [&](const ExprRef& e) {
          walkExprs(
              e, [&](const ExprRef& y) { reads |= y->kind == ExprKind::Load && y->buffer == t; });
        });
      });
      if (!reads) return;
      for (StmtRef l = s; l && l->kind == StmtKind::For && !l->pinned;
           l = l->body.size() == 1 ? l->body[0] : nullptr)
        candidates.push_back(f.var(l->var).name);
      if (candidates.empty()) candidates.push_back("");
    });
    std::string name = f.buffer(t).name;
    for (const std::string& loop : candidates) {
      if (loop.empty()) continue;
      if (!computeAt(f, name, loop).isOk()) continue;
      steps.push_back({"compute_at", loop, {}, 0, name});
      break;
    }
  }
}

}  // namespace

std::vector<ScheduleStep> applyDefaultSteps(LoopFunc& f, const Schedule& s) {
  std::vector<ScheduleStep> steps;
  if (!f.body) return steps;
  // A small kernel's temps sit in L1 and its nests run on one thread anyway:
  // moving them gains nothing, so its loop IR stays as lowered.
  if (s.computeAtRows && work(f.body) >= s.parallelMinWork) computeAtRows(f, steps);
  Kinds(f, s, steps).visit(f.body, 0);
  if (s.threads == 1)  // templates included: the whole kernel on the calling thread
    walk(f.body, [](const StmtRef& st) {
      if (st->kind == StmtKind::For && st->forKind == ForKind::Parallel)
        st->forKind = ForKind::Serial;
    });
  return steps;
}

void applySchedule(LoopFunc& f, const Schedule& s) { applyDefaultSteps(f, s); }

Status scheduleKernel(LoopFunc& f, const Schedule& s) {
  applyDefaultSteps(f, s);
  for (const ScheduleStep& st : s.steps) {
    Status r = applyStep(f, st);
    if (!r.isOk())
      return Status::error("schedule step " + stepText(st) + ": " + r.message(),
                           "kernel " + f.name);
  }
  // Last: the loops' final extents decide the index divisions.
  simplifyIndexDivMod(f);
  return Status::ok();
}

}  // namespace fuselens
