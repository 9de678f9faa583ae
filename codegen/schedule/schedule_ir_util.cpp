// See schedule_ir_util.h. Everything here reads or copies statement trees; the
// primitives themselves (schedule_prims.cpp, schedule_dataflow.cpp) mutate.
#include "codegen/schedule/schedule_ir_util.h"

namespace fuselens::sched {

void normalize(LoopFunc& f) {
  if (f.body && f.body->kind == StmtKind::For) f.body = seq({f.body});
}

namespace {

void findIn(std::vector<StmtRef>& body, const std::string& name, const LoopFunc& f,
            std::vector<StmtRef>& enclosing, StmtRef top, std::vector<LoopSite>& out) {
  for (size_t i = 0; i < body.size(); ++i) {
    const StmtRef& s = body[i];
    StmtRef t = top ? top : s;
    if (s->kind == StmtKind::For && f.var(s->var).name == name)
      out.push_back({s, &body, i, enclosing, t});
    if (s->kind == StmtKind::For) enclosing.push_back(s);
    findIn(s->body, name, f, enclosing, t, out);
    if (s->kind == StmtKind::For) enclosing.pop_back();
  }
}

}  // namespace

Expected<LoopSite> findLoop(LoopFunc& f, const std::string& name) {
  normalize(f);
  std::vector<LoopSite> found;
  std::vector<StmtRef> enclosing;
  if (f.body) {
    // Top-level statements sit under Allocate wrappers; "top" is the first
    // statement below them, the nest itself.
    std::function<void(std::vector<StmtRef>&)> descend = [&](std::vector<StmtRef>& body) {
      for (size_t i = 0; i < body.size(); ++i) {
        StmtRef s = body[i];
        if (s->kind == StmtKind::Allocate || s->kind == StmtKind::Seq) {
          descend(s->body);
          continue;
        }
        std::vector<StmtRef> one = {s};
        size_t before = found.size();
        findIn(one, name, f, enclosing, nullptr, found);
        for (size_t k = before; k < found.size(); ++k)
          if (found[k].siblings == &one) found[k].siblings = &body, found[k].pos = i;
      }
    };
    std::vector<StmtRef> root = {f.body};
    descend(root);
  }
  if (found.empty()) return Status::error("there is no loop named " + name);
  if (found.size() > 1)
    return Status::error("there are " + std::to_string(found.size()) + " loops named " + name +
                         "; a step must name one");
  return found[0];
}

std::optional<BufferId> findBuffer(const LoopFunc& f, const std::string& name) {
  for (const Buffer& b : f.buffers)
    if (b.name == name) return b.id;
  return std::nullopt;
}

std::string uniqueName(const LoopFunc& f, const std::string& base) {
  auto taken = [&](const std::string& n) {
    for (const Var& v : f.vars)
      if (v.name == n) return true;
    for (const Buffer& b : f.buffers)
      if (b.name == n) return true;
    return false;
  };
  std::string n = base;
  for (int k = 2; taken(n); ++k) n = base + "_" + std::to_string(k);
  return n;
}

ExprRef substitute(const ExprRef& e, const Subst& s) {
  if (e->kind == ExprKind::VarRef) {
    auto it = s.find(e->var.index);
    return it == s.end() ? e : it->second;
  }
  bool changed = false;
  std::vector<ExprRef> ops;
  for (const ExprRef& o : e->ops) {
    ops.push_back(substitute(o, s));
    changed = changed || ops.back() != o;
  }
  if (!changed) return e;
  // Index arithmetic is rebuilt through the folding builder (i * 1 + 0 -> i).
  if (e->kind == ExprKind::Binary && e->type == DType::I64 && ops[0]->type == DType::I64 &&
      ops[1]->type == DType::I64)
    return binary(e->bin, ops[0], ops[1]);
  auto n = std::make_shared<Expr>(*e);
  n->ops = std::move(ops);
  return n;
}

ExprRef mapExprsBottomUp(const ExprRef& e, const std::function<ExprRef(const ExprRef&)>& fn) {
  bool changed = false;
  std::vector<ExprRef> ops;
  for (const ExprRef& o : e->ops) {
    ops.push_back(mapExprsBottomUp(o, fn));
    changed = changed || ops.back() != o;
  }
  ExprRef cur = e;
  if (changed) {
    auto n = std::make_shared<Expr>(*e);
    n->ops = std::move(ops);
    cur = n;
  }
  return fn(cur);
}

ExprRef mapLoads(const ExprRef& e, BufferId b, const std::function<ExprRef(const ExprRef&)>& fn) {
  return mapExprsBottomUp(e, [&](const ExprRef& cur) {
    return cur->kind == ExprKind::Load && cur->buffer == b ? fn(cur) : cur;
  });
}

StmtRef cloneStmt(const StmtRef& st, Subst s, LoopFunc* fresh, const std::string& suffix) {
  auto n = std::make_shared<Stmt>(*st);
  if (n->index) n->index = substitute(n->index, s);
  if (n->value) n->value = substitute(n->value, s);
  if (fresh && n->kind == StmtKind::For) {
    Var v = fresh->addVar(uniqueName(*fresh, fresh->var(st->var).name + suffix), DType::I64);
    n->var = v.id;
    s[st->var.index] = varRef(v);
  }
  for (StmtRef& c : n->body) c = cloneStmt(c, s, fresh, suffix);
  return n;
}

namespace {

std::optional<Affine> combine(const Affine& a, const Affine& b, int64_t sign) {
  Affine r = a;
  r.c += sign * b.c;
  for (auto [v, k] : b.coef) r.coef[v] += sign * k;
  return r;
}

Affine scaled(Affine a, int64_t k) {
  a.c *= k;
  for (auto& [v, c] : a.coef) c *= k;
  return a;
}

}  // namespace

std::optional<Affine> affineOf(const ExprRef& e) {
  if (e->type != DType::I64) return std::nullopt;
  if (e->kind == ExprKind::IntConst) return Affine{{}, e->i};
  if (e->kind == ExprKind::VarRef) return Affine{{{e->var.index, 1}}, 0};
  if (e->kind != ExprKind::Binary) return std::nullopt;
  auto a = affineOf(e->ops[0]), b = affineOf(e->ops[1]);
  if (!a || !b) return std::nullopt;
  switch (e->bin) {
    case BinOp::Add:
      return combine(*a, *b, 1);
    case BinOp::Sub:
      return combine(*a, *b, -1);
    case BinOp::Mul:
      if (b->coef.empty()) return scaled(*a, b->c);
      if (a->coef.empty()) return scaled(*b, a->c);
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

ExprRef affineExpr(const LoopFunc& f, const Affine& a) {
  ExprRef e = intConst(0);
  for (auto [v, k] : a.coef)
    if (k != 0) e = add(e, mul(varRef(f.var(VarId(v))), intConst(k)));
  return add(e, intConst(a.c));
}

void walkExprs(const ExprRef& e, const std::function<void(const ExprRef&)>& fn) {
  fn(e);
  for (const ExprRef& o : e->ops) walkExprs(o, fn);
}

void forEachExpr(const StmtRef& s, const std::function<void(const ExprRef&)>& fn) {
  if (s->index) fn(s->index);
  if (s->value) fn(s->value);
}

void walk(const StmtRef& s, const std::function<void(const StmtRef&)>& fn) {
  fn(s);
  for (const StmtRef& c : s->body) walk(c, fn);
}

bool usesVar(const ExprRef& e, int32_t var) {
  bool found = false;
  walkExprs(e, [&](const ExprRef& x) {
    found = found || (x->kind == ExprKind::VarRef && x->var.index == var);
  });
  return found;
}

bool stmtUsesVar(const StmtRef& s, int32_t var) {
  bool found = false;
  walk(s, [&](const StmtRef& t) {
    forEachExpr(t, [&](const ExprRef& e) { found = found || usesVar(e, var); });
  });
  return found;
}

void effectsOf(const StmtRef& s, Effects& fx) {
  walk(s, [&](const StmtRef& t) {
    if (t->kind == StmtKind::Store) fx.stores.insert(t->buffer.index);
    if (t->kind == StmtKind::Assign) fx.assigned.insert(t->var.index);
    if (t->kind == StmtKind::Let || t->kind == StmtKind::For) fx.declared.insert(t->var.index);
    if (t->kind == StmtKind::Allocate) fx.allocated.insert(t->buffer.index);
    forEachExpr(t, [&](const ExprRef& e) {
      walkExprs(e, [&](const ExprRef& x) {
        if (x->kind == ExprKind::Load) fx.loads.insert(x->buffer.index);
      });
    });
  });
}

bool hasFor(const StmtRef& s) {
  for (const StmtRef& c : s->body)
    if (c->kind == StmtKind::For || hasFor(c)) return true;
  return false;
}

}  // namespace fuselens::sched
