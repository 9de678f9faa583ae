#include "codegen/schedule/index_simplify.h"

#include <limits>
#include <map>
#include <set>

#include "codegen/schedule/schedule_ir_util.h"

namespace fuselens {
namespace {

using sched::Affine;

constexpr int64_t kUnbounded = std::numeric_limits<int64_t>::max();

// A counter's values: [lo, hi], hi kUnbounded for a run-time extent.
struct Range {
  int64_t lo = 0, hi = kUnbounded;
};

int64_t floorDiv(int64_t a, int64_t c) { return a / c - ((a % c != 0) && (a < 0)); }

class Simplifier {
 public:
  explicit Simplifier(LoopFunc& f) : f_(f) {
    sched::Effects e;
    sched::effectsOf(f.body, e);
    assigned_ = e.assigned;
  }

  void visit(const StmtRef& s) {
    if (s->index) s->index = rewrite(s->index);
    if (s->value) s->value = rewrite(s->value);
    if (s->kind == StmtKind::Let && s->value && !assigned_.count(s->var.index) &&
        s->value->type == DType::I64)
      lets_[s->var.index] = sched::substitute(s->value, lets_);  // see through names
    if (s->kind == StmtKind::For) {
      Range r;
      if (!s->runtimeExtent) r.hi = s->extent - 1;
      ranges_[s->var.index] = r;
    }
    for (const StmtRef& c : s->body) visit(c);
    if (s->kind == StmtKind::For) ranges_.erase(s->var.index);
  }

  int removed() const { return removed_; }

 private:
  ExprRef rewrite(const ExprRef& e) {
    return sched::mapExprsBottomUp(e, [&](const ExprRef& cur) -> ExprRef {
      if (cur->kind == ExprKind::Binary && cur->type == DType::I64 &&
          (cur->bin == BinOp::Div || cur->bin == BinOp::Mod) &&
          cur->ops[1]->kind == ExprKind::IntConst && cur->ops[1]->i > 0)
        if (ExprRef r = divMod(cur->bin, cur->ops[0], cur->ops[1]->i)) {
          ++removed_;
          return r;
        }
      return cur;
    });
  }

  // a / c or a % c as affine code, or nullptr when the ranges do not decide it.
  ExprRef divMod(BinOp op, const ExprRef& a, int64_t c) {
    auto aff = sched::affineOf(sched::substitute(a, lets_));
    if (!aff) return nullptr;
    Affine q, r;
    q.c = floorDiv(aff->c, c);
    r.c = aff->c - q.c * c;
    for (auto [v, k] : aff->coef) {
      if (k == 0) continue;
      if (!ranges_.count(v)) return nullptr;  // not a counter of an enclosing loop
      if (k % c == 0)
        q.coef[v] = k / c;
      else
        r.coef[v] = k;
    }
    // r in [0, c) and q >= 0: then a >= 0, where truncation is the floor.
    int64_t rLo = r.c, rHi = r.c, qLo = q.c;
    for (auto [v, k] : r.coef) {
      const Range& span = ranges_.at(v);
      // Bounded so the sums below cannot overflow.
      if (span.hi == kUnbounded || span.hi > (int64_t(1) << 40) || k > (int64_t(1) << 20) ||
          k < -(int64_t(1) << 20))
        return nullptr;
      rLo += k > 0 ? k * span.lo : k * span.hi;
      rHi += k > 0 ? k * span.hi : k * span.lo;
    }
    for (auto [v, k] : q.coef) {
      if (k < 0) return nullptr;
      qLo += k * ranges_.at(v).lo;
    }
    if (rLo < 0 || rHi >= c || qLo < 0) return nullptr;
    return sched::affineExpr(f_, op == BinOp::Div ? q : r);
  }

  LoopFunc& f_;
  std::set<int32_t> assigned_;
  sched::Subst lets_;
  std::map<int32_t, Range> ranges_;
  int removed_ = 0;
};

}  // namespace

int simplifyIndexDivMod(LoopFunc& f) {
  if (!f.body) return 0;
  Simplifier s(f);
  s.visit(f.body);
  return s.removed();
}

}  // namespace fuselens
