// inline and cache_local: the dataflow primitives that replace a temp's loads
// by its stored expression, or stage a buffer's slice in a Local around a
// loop. See schedule_prims.h.
#include <algorithm>
#include <functional>

#include "codegen/schedule/schedule_dataflow_util.h"
#include "codegen/schedule/schedule_prims.h"

namespace fuselens {

using namespace sched;

Status inlineTemp(LoopFunc& f, const std::string& bufName) {
  auto b = tempNamed(f, bufName);
  if (!b) return b.status();
  TopLevel top = topLevel(f);
  if (!top.list) return refuse(f, "kernel " + f.name + " has no loop nests");
  auto prod = producerOf(f, top, *b);
  if (!prod) return prod.status();
  StmtRef st;
  auto chain = storeChain(prod->nest, *b, &st);
  if (!chain)
    return refuse(f, "temp " + bufName +
                         " is not filled by a plain elementwise store (its nest "
                         "holds more than loops, locals and the store)");
  // Locals of the innermost body fold into the stored value.
  Subst lets;
  for (const StmtRef& s : chain->back()->body)
    if (s->kind == StmtKind::Let) lets[s->var.index] = substitute(s->value, lets);
  ExprRef value = substitute(st->value, lets);
  std::set<int32_t> loopVars;
  for (const StmtRef& l : *chain) loopVars.insert(l->var.index);
  bool pure = true;
  walkExprs(value, [&](const ExprRef& x) {
    if (x->kind == ExprKind::VarRef && !loopVars.count(x->var.index)) pure = false;
    if (x->kind == ExprKind::Load && x->buffer == *b) pure = false;
  });
  if (!pure)
    return refuse(f,
                  "the value stored into " + bufName + " depends on more than its loop counters");
  // The store must be the row-major position of its loops: then a load at
  // flat position e reads counter k as (e / stride_k) % extent_k.
  auto a = affineOf(st->index);
  int64_t stride = 1;
  Subst at;
  std::vector<std::pair<int32_t, int64_t>> dims;  // var, extent; innermost first
  for (size_t k = chain->size(); k-- > 0;)
    dims.push_back({(*chain)[k]->var.index, (*chain)[k]->extent});
  bool rowMajor = a && a->c == 0;
  for (auto [v, ext] : dims) {
    if (!rowMajor) break;
    int64_t k = a->coef.count(v) ? a->coef.at(v) : 0;
    if (ext > 1 && k != stride) rowMajor = false;
    stride *= ext;
  }
  if (!rowMajor || stride != f.buffer(*b).numel())
    return refuse(f, "temp " + bufName + " is not stored at the row-major position of its loops");
  Effects vfx;
  effectsOf(store(f.buffer(*b), intConst(0), value), vfx);
  for (size_t i = prod->pos + 1; i < top.list->size(); ++i) {
    Effects fx;
    effectsOf((*top.list)[i], fx);
    for (int32_t w : fx.stores)
      if (vfx.loads.count(w) && w != b->index)
        return refuse(f, "the value stored into " + bufName + " reads " +
                             f.buffer(BufferId(w)).name + ", which is written after it");
  }
  if (!allocatedAtTop(top, *b))
    return refuse(f, "temp " + bufName + " is not allocated at the kernel's top level");
  auto replace = [&](const ExprRef& ld) {
    Subst s;
    int64_t str = 1;
    for (auto [v, ext] : dims) {
      ExprRef c = str == 1 ? ld->ops[0] : div(ld->ops[0], intConst(str));
      s[v] =
          ext == 1 ? intConst(0) : (str * ext == stride ? c : binary(BinOp::Mod, c, intConst(ext)));
      str *= ext;
    }
    return substitute(value, s);
  };
  top.list->erase(top.list->begin() + std::ptrdiff_t(prod->pos));
  unwrapAllocate(top, *b);
  walk(f.body, [&](const StmtRef& t) {
    if (t->index) t->index = mapLoads(t->index, *b, replace);
    if (t->value) t->value = mapLoads(t->value, *b, replace);
  });
  f.buffers[b->index].kind = BufferKind::Local;  // unused now: takes no scratch
  f.buffers[b->index].shape = {1};
  return Status::ok();
}

namespace {

// Whether the one store of b under loop L writes every element of its n-wide
// slice: its index is row-major over the loops around it inside L (loops it
// does not use rewrite the same element, which leaves coverage alone).
bool denseStore(const StmtRef& L, BufferId b, int64_t n, int64_t lo) {
  std::vector<StmtRef> stack;
  std::optional<bool> dense;
  std::function<void(const StmtRef&)> visit = [&](const StmtRef& s) {
    if (s->kind == StmtKind::Store && s->buffer == b) {
      auto a = affineOf(s->index);
      if (!a || a->c != lo) return void(dense = false);
      std::vector<std::pair<int64_t, int64_t>> dims;  // coef, extent
      for (const StmtRef& l : stack) {
        auto it = a->coef.find(l->var.index);
        if (it != a->coef.end() && it->second != 0 && l->extent > 1)
          dims.push_back({it->second, l->extent});
      }
      std::sort(dims.begin(), dims.end());
      int64_t stride = 1;
      for (auto [c, e] : dims) {
        if (c != stride) return void(dense = false);
        stride *= e;
      }
      dense = stride == n;
      return;
    }
    if (s->kind == StmtKind::For) stack.push_back(s);
    for (const StmtRef& c : s->body) visit(c);
    if (s->kind == StmtKind::For) stack.pop_back();
  };
  for (const StmtRef& c : L->body) visit(c);
  return dense.value_or(false);
}

}  // namespace

Status cacheLocal(LoopFunc& f, const std::string& bufName, const std::string& loopName) {
  auto b = findBuffer(f, bufName);
  if (!b) return refuse(f, "kernel " + f.name + " has no buffer named " + bufName);
  if (f.buffer(*b).kind == BufferKind::Local || f.buffer(*b).kind == BufferKind::Constant)
    return refuse(f, "buffer " + bufName + " is already local or constant");
  auto site = findLoop(f, loopName);
  if (!site) return site.status();
  StmtRef L = site->loop;
  std::set<int32_t> outer;
  for (const StmtRef& e : site->enclosing) outer.insert(e->var.index);
  outer.insert(L->var.index);
  auto acc = accessesOf(seq(L->body), *b, outer, loopExtents(seq(L->body)));
  if (!acc || acc->empty())
    return refuse(f, "loop " + loopName + " does not access " + bufName +
                         " at one affine slice per iteration");
  int64_t lo = (*acc)[0].lo, hi = (*acc)[0].hi;
  for (const Access& a : *acc) lo = std::min(lo, a.lo), hi = std::max(hi, a.hi);
  int64_t n = hi - lo + 1;
  if (n > kMaxSlice)
    return refuse(f, "the slice of " + bufName + " per iteration of loop " + loopName + " has " +
                         std::to_string(n) + " elements, more than a local holds");
  Effects fx;
  effectsOf(seq(L->body), fx);
  bool stored = fx.stores.count(b->index), loaded = fx.loads.count(b->index);
  // Without loads, a single store over a dense slice needs no copy-in.
  int64_t storesSeen = 0;
  walk(seq(L->body),
       [&](const StmtRef& t) { storesSeen += t->kind == StmtKind::Store && t->buffer == *b; });
  bool dense = stored && !loaded && storesSeen == 1 && denseStore(L, *b, n, lo);
  const Buffer src = f.buffer(*b);
  BufferId lb = f.addBuffer(uniqueName(f, bufName + "_l"), BufferKind::Local, src.dtype, {n});
  Affine base;
  base.coef = (*acc)[0].base;
  base.c = lo;
  ExprRef baseE = affineExpr(f, base);
  std::vector<StmtRef> body;
  auto copy = [&](bool in) {
    Var t = f.addVar(uniqueName(f, bufName + (in ? "_in" : "_out")), DType::I64);
    ExprRef g = add(baseE, varRef(t));
    StmtRef s = in ? store(f.buffer(lb), varRef(t), load(f.buffer(*b), g))
                   : store(f.buffer(*b), g, load(f.buffer(lb), varRef(t)));
    StmtRef l = forLoop(t, n, {s});
    l->forKind = ForKind::Vectorized;
    return l;
  };
  if (loaded || (stored && !dense)) body.push_back(copy(true));
  for (const StmtRef& s : L->body) body.push_back(rewriteAccesses(f, s, *b, lb, {}, outer, lo));
  if (stored) body.push_back(copy(false));
  L->body = {allocate(f.buffer(lb), std::move(body))};
  return Status::ok();
}

}  // namespace fuselens
