// See schedule_dataflow_util.h.
#include "codegen/schedule/schedule_dataflow_util.h"

namespace fuselens::sched {

TopLevel topLevel(LoopFunc& f) {
  normalize(f);
  TopLevel t;
  StmtRef s = f.body;
  while (s && s->body.size() == 1 &&
         (s->kind == StmtKind::Allocate ||
          (s->kind == StmtKind::Seq &&
           (s->body[0]->kind == StmtKind::Seq || s->body[0]->kind == StmtKind::Allocate)))) {
    if (s->kind == StmtKind::Allocate) t.allocs.push_back(s);
    s = s->body[0];
  }
  if (s && s->kind == StmtKind::Allocate) t.allocs.push_back(s);
  if (s) t.list = &s->body;
  return t;
}

bool allocatedAtTop(const TopLevel& t, BufferId b) {
  for (const StmtRef& a : t.allocs)
    if (a->buffer == b) return true;
  return false;
}

bool unwrapAllocate(const TopLevel& t, BufferId b) {
  for (size_t k = 0; k < t.allocs.size(); ++k) {
    if (t.allocs[k]->buffer != b) continue;
    // Turn the wrapper into a Seq of its body: the chain stays intact.
    t.allocs[k]->kind = StmtKind::Seq;
    t.allocs[k]->buffer = BufferId();
    return true;
  }
  return false;
}

Expected<BufferId> tempNamed(const LoopFunc& f, const std::string& name) {
  auto b = findBuffer(f, name);
  if (!b) return refuse(f, "kernel " + f.name + " has no buffer named " + name);
  if (f.buffer(*b).kind != BufferKind::Temp)
    return refuse(f, "buffer " + name + " is not a temp (only temps can move)");
  return *b;
}

Expected<Producer> producerOf(const LoopFunc& f, const TopLevel& t, BufferId b) {
  std::optional<Producer> p;
  for (size_t i = 0; i < t.list->size(); ++i) {
    Effects fx;
    effectsOf((*t.list)[i], fx);
    if (!fx.stores.count(b.index)) continue;
    if (p) return refuse(f, "temp " + f.buffer(b).name + " is written by several nests");
    if ((*t.list)[i]->kind != StmtKind::For)
      return refuse(f, "temp " + f.buffer(b).name + " is not written by a loop nest");
    for (int32_t w : fx.stores)  // Locals are the nest's own scratch (lane partials)
      if (w != b.index && f.buffer(BufferId(w)).kind != BufferKind::Local)
        return refuse(f, "the nest writing temp " + f.buffer(b).name + " also writes " +
                             f.buffer(BufferId(w)).name);
    p = Producer{i, (*t.list)[i]};
  }
  if (!p) return refuse(f, "no nest writes temp " + f.buffer(b).name);
  return *p;
}

int64_t countLoads(const StmtRef& s, BufferId b) {
  int64_t n = 0;
  walk(s, [&](const StmtRef& t) {
    forEachExpr(t, [&](const ExprRef& e) {
      walkExprs(e, [&](const ExprRef& x) { n += x->kind == ExprKind::Load && x->buffer == b; });
    });
  });
  return n;
}

std::map<int32_t, int64_t> loopExtents(const StmtRef& s) {
  std::map<int32_t, int64_t> ext;
  walk(s, [&](const StmtRef& t) {
    if (t->kind == StmtKind::For) ext[t->var.index] = t->extent;
  });
  return ext;
}

namespace {

std::optional<Access> splitAccess(const ExprRef& index, const std::set<int32_t>& outer,
                                  const std::map<int32_t, int64_t>& inner) {
  auto a = affineOf(index);
  if (!a) return std::nullopt;
  Access r;
  r.lo = r.hi = a->c;
  for (auto [v, k] : a->coef) {
    if (k == 0) continue;
    if (outer.count(v)) {
      r.base[v] = k;
    } else if (auto it = inner.find(v); it != inner.end() && k > 0) {
      r.hi += k * (it->second - 1);
    } else {
      return std::nullopt;
    }
  }
  return r;
}

ExprRef withoutBase(const LoopFunc& f, const ExprRef& index, const std::set<int32_t>& outer,
                    int64_t shift) {
  Affine a = *affineOf(index);
  for (int32_t v : outer) a.coef.erase(v);
  a.c -= shift;
  return affineExpr(f, a);
}

}  // namespace

std::optional<std::vector<Access>> accessesOf(const StmtRef& s, BufferId b,
                                              const std::set<int32_t>& outer,
                                              const std::map<int32_t, int64_t>& inner) {
  std::vector<Access> out;
  bool ok = true;
  auto take = [&](const ExprRef& idx) {
    auto a = splitAccess(idx, outer, inner);
    if (!a || (!out.empty() && a->base != out[0].base)) ok = false;
    if (a) out.push_back(*a);
  };
  walk(s, [&](const StmtRef& t) {
    if (t->kind == StmtKind::Store && t->buffer == b) take(t->index);
    forEachExpr(t, [&](const ExprRef& e) {
      walkExprs(e, [&](const ExprRef& x) {
        if (x->kind == ExprKind::Load && x->buffer == b) take(x->ops[0]);
      });
    });
  });
  if (!ok) return std::nullopt;
  return out;
}

StmtRef rewriteAccesses(const LoopFunc& f, const StmtRef& s, BufferId from, BufferId to,
                        const Subst& sub, const std::set<int32_t>& outer, int64_t shift) {
  StmtRef c = cloneStmt(s, sub);
  const Buffer& tb = f.buffer(to);
  walk(c, [&](const StmtRef& t) {
    auto fix = [&](const ExprRef& e) {
      return mapLoads(e, from, [&](const ExprRef& x) {
        return load(tb, withoutBase(f, x->ops[0], outer, shift));
      });
    };
    if (t->index) t->index = fix(t->index);
    if (t->value) t->value = fix(t->value);
    if (t->kind == StmtKind::Store && t->buffer == from) {
      t->buffer = to;
      t->index = withoutBase(f, t->index, outer, shift);
    }
  });
  return c;
}

std::optional<std::vector<StmtRef>> storeChain(const StmtRef& p, BufferId b, StmtRef* st) {
  std::vector<StmtRef> chain = {p};
  while (chain.back()->body.size() == 1 && chain.back()->body[0]->kind == StmtKind::For)
    chain.push_back(chain.back()->body[0]);
  *st = nullptr;
  for (const StmtRef& s : chain.back()->body) {
    if (s->kind == StmtKind::Store && s->buffer == b && !*st)
      *st = s;
    else if (s->kind != StmtKind::Let)
      return std::nullopt;
  }
  if (!*st) return std::nullopt;
  return chain;
}

}  // namespace fuselens::sched
