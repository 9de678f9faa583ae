// See hoist_shared.h. Per statement: count how many parents each expression
// node has (visiting a shared node's operands once), then rebuild the
// statement's expressions bottom-up, turning every composite node with two or
// more parents into a `let` placed before the statement.
#include "codegen/lower/hoist_shared.h"

#include <map>

namespace fuselens {
namespace {

bool composite(const Expr& e) {
  return e.kind == ExprKind::Binary || e.kind == ExprKind::Unary || e.kind == ExprKind::Compare ||
         e.kind == ExprKind::Select || e.kind == ExprKind::Fma || e.kind == ExprKind::Cast;
}

class Hoister {
 public:
  explicit Hoister(LoopFunc& f) : f_(f) {}

  void block(std::vector<StmtRef>& stmts) {
    std::vector<StmtRef> out;
    for (StmtRef& s : stmts) {
      if (s->kind == StmtKind::Store || s->kind == StmtKind::Let || s->kind == StmtKind::Assign) {
        parents_.clear();
        rewritten_.clear();
        if (s->index) count(s->index);
        if (s->value) count(s->value);
        std::vector<StmtRef> lets;
        if (s->index) s->index = rewrite(s->index, lets);
        if (s->value) s->value = rewrite(s->value, lets);
        for (StmtRef& l : lets) out.push_back(std::move(l));
      } else {
        block(s->body);
      }
      out.push_back(std::move(s));
    }
    stmts = std::move(out);
  }

 private:
  void count(const ExprRef& e) {
    if (parents_[e.get()]++ > 0) return;
    for (const auto& o : e->ops) count(o);
  }

  ExprRef rewrite(const ExprRef& e, std::vector<StmtRef>& lets) {
    if (auto it = rewritten_.find(e.get()); it != rewritten_.end()) return it->second;
    std::vector<ExprRef> ops;
    bool changed = false;
    for (const auto& o : e->ops) {
      ops.push_back(rewrite(o, lets));
      changed |= ops.back() != o;
    }
    ExprRef r = e;
    if (changed) {
      auto copy = std::make_shared<Expr>(*e);
      copy->ops = std::move(ops);
      r = copy;
    }
    if (composite(*e) && parents_[e.get()] > 1) {
      Var v = f_.addVar("e" + std::to_string(next_++), e->type);
      lets.push_back(let(v, r));
      r = varRef(v);
    }
    rewritten_[e.get()] = r;
    return r;
  }

  LoopFunc& f_;
  std::map<const Expr*, int> parents_;
  std::map<const Expr*, ExprRef> rewritten_;
  int next_ = 0;
};

}  // namespace

void hoistSharedExprs(LoopFunc& f) {
  if (!f.body) return;
  std::vector<StmtRef> top = {f.body};
  Hoister(f).block(top);
  f.body = top.size() == 1 ? top[0] : seq(std::move(top));
}

}  // namespace fuselens
