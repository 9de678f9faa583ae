// The loop-shape primitives (split, reorder, fuse) and the loop kinds
// (vectorize, parallel, unroll), each checked for legality before it mutates.
// The dataflow primitives (compute_at, inline, cache_local) live in
// schedule_dataflow.cpp. See schedule_prims.h.
#include "codegen/schedule/schedule_prims.h"

#include "codegen/schedule/schedule_ir_util.h"

namespace fuselens {

using namespace sched;

namespace {

constexpr int64_t kMaxUnroll = 64;  // the backend replicates at most this many bodies

// The caller (scheduleKernel) adds the kernel as the place.
Status refuse(const LoopFunc&, const std::string& why) { return Status::error(why); }

std::string nameOf(const LoopFunc& f, const StmtRef& loop) { return f.var(loop->var).name; }

Status notPinned(const LoopFunc& f, const LoopSite& site) {
  if (site.loop->pinned)
    return refuse(f, "loop " + nameOf(f, site.loop) +
                         " belongs to a template nest (MatMul/Conv tiling or a row reduction) "
                         "whose schedule is fixed");
  return Status::ok();
}

// Why iterations of `loop` are not independent, or "" when they are: a local
// from outside updated inside (a reduction), or a buffer element one
// iteration writes that another reads or writes.
std::string carriedDependence(const LoopFunc& f, const StmtRef& loop) {
  Effects fx;
  effectsOf(loop, fx);
  for (int32_t v : fx.assigned)
    if (!fx.declared.count(v))
      return "loop " + nameOf(f, loop) + " carries a reduction into " + f.var(VarId(v)).name;
  std::map<int32_t, std::string> storeIndex;  // buffer -> the one index text it is stored at
  std::string why;
  walk(loop, [&](const StmtRef& s) {
    if (s->kind != StmtKind::Store || !why.empty()) return;
    if (fx.allocated.count(s->buffer.index)) return;  // private to one iteration
    std::string at = printExpr(f, s->index);
    const std::string& buf = f.buffer(s->buffer).name;
    if (!usesVar(s->index, loop->var.index))
      why = "every iteration of loop " + nameOf(f, loop) + " writes " + buf + "[" + at + "]";
    else if (storeIndex.count(s->buffer.index) && storeIndex[s->buffer.index] != at)
      why = "loop " + nameOf(f, loop) + " writes " + buf + " at two different positions";
    storeIndex[s->buffer.index] = at;
  });
  if (!why.empty()) return why;
  walk(loop, [&](const StmtRef& s) {
    forEachExpr(s, [&](const ExprRef& e) {
      walkExprs(e, [&](const ExprRef& x) {
        if (x->kind != ExprKind::Load || !why.empty()) return;
        auto it = storeIndex.find(x->buffer.index);
        if (it != storeIndex.end() && printExpr(f, x->ops[0]) != it->second)
          why = "loop " + nameOf(f, loop) + " reads " + f.buffer(x->buffer).name +
                " where another iteration writes it";
      });
    });
  });
  return why;
}

void replaceAt(const LoopSite& site, std::vector<StmtRef> with) {
  auto& sib = *site.siblings;
  sib.erase(sib.begin() + std::ptrdiff_t(site.pos));
  sib.insert(sib.begin() + std::ptrdiff_t(site.pos), with.begin(), with.end());
}

}  // namespace

std::string stepText(const ScheduleStep& s) {
  std::string args;
  auto arg = [&](const std::string& a) { args += (args.empty() ? "" : ", ") + a; };
  if (!s.buffer.empty()) arg(s.buffer);
  if (!s.loop.empty()) arg(s.loop);
  for (const std::string& l : s.loops) arg(l);
  if (s.factor) arg(std::to_string(s.factor));
  return s.op + "(" + args + ")";
}

Status splitLoop(LoopFunc& f, const std::string& name, int64_t factor) {
  auto site = findLoop(f, name);
  if (!site) return site.status();
  FL_RETURN_IF_ERROR(notPinned(f, *site));
  StmtRef l = site->loop;
  if (factor < 2 || factor >= l->extent)
    return refuse(f, "split factor " + std::to_string(factor) + " of loop " + name +
                         " must lie in 2.." + std::to_string(l->extent - 1) + " (its extent is " +
                         std::to_string(l->extent) + ")");
  int64_t outerN = l->extent / factor, tail = l->extent % factor;
  Var vo = f.addVar(uniqueName(f, name + "o"), DType::I64);
  Var vi = f.addVar(uniqueName(f, name + "i"), DType::I64);
  std::vector<StmtRef> body;
  for (const StmtRef& c : l->body)
    body.push_back(
        cloneStmt(c, {{l->var.index, add(mul(varRef(vo), intConst(factor)), varRef(vi))}}));
  StmtRef inner = forLoop(vi, factor, std::move(body));
  bool innerKind = l->forKind == ForKind::Vectorized || l->forKind == ForKind::Unrolled;
  inner->forKind = innerKind ? l->forKind : ForKind::Serial;
  StmtRef outer = forLoop(vo, outerN, {inner});
  outer->forKind = l->forKind == ForKind::Parallel ? ForKind::Parallel : ForKind::Serial;
  std::vector<StmtRef> with = {outer};
  if (tail) {
    Var vt = f.addVar(uniqueName(f, name + "t"), DType::I64);
    std::vector<StmtRef> tb;
    for (const StmtRef& c : l->body)
      tb.push_back(
          cloneStmt(c, {{l->var.index, add(intConst(outerN * factor), varRef(vt))}}, &f, "t"));
    with.push_back(forLoop(vt, tail, std::move(tb)));
  }
  replaceAt(*site, std::move(with));
  return Status::ok();
}

Status reorderLoops(LoopFunc& f, const std::vector<std::string>& order) {
  if (order.size() < 2) return refuse(f, "reorder needs at least two loops");
  std::vector<LoopSite> sites;
  for (const std::string& n : order) {
    auto s = findLoop(f, n);
    if (!s) return s.status();
    FL_RETURN_IF_ERROR(notPinned(f, *s));
    sites.push_back(*s);
  }
  size_t outer = 0;
  for (size_t k = 1; k < sites.size(); ++k)
    if (sites[k].enclosing.size() < sites[outer].enclosing.size()) outer = k;
  std::vector<StmtRef> chain = {sites[outer].loop};
  while (chain.size() < order.size()) {
    const StmtRef& cur = chain.back();
    if (cur->body.size() != 1 || cur->body[0]->kind != StmtKind::For)
      return refuse(f, "loops " + order[0] + ".." + order.back() +
                           " are not perfectly nested: loop " + nameOf(f, cur) +
                           " holds other statements than the next loop");
    chain.push_back(cur->body[0]);
  }
  std::set<std::string> want(order.begin(), order.end()), have;
  for (const StmtRef& c : chain) have.insert(nameOf(f, c));
  if (want != have || want.size() != order.size())
    return refuse(f, "loops " + order[0] + ".." + order.back() + " are not one perfect nest");
  // Every loop of the nest must be free of carried dependences except through
  // buffers stored at one index, which keeps each element's update order.
  Effects fx;
  effectsOf(chain[0], fx);
  for (int32_t v : fx.assigned)
    if (!fx.declared.count(v))
      return refuse(f, "the nest " + order[0] + ".." + order.back() + " accumulates into " +
                           f.var(VarId(v)).name + "; reordering would change the sum's order");
  for (const StmtRef& c : chain) {
    std::string why = carriedDependence(f, c);
    if (!why.empty() && why.find("reads") != std::string::npos) return refuse(f, why);
  }
  struct Head {
    VarId var;
    int64_t extent;
    ForKind kind;
  };
  std::map<std::string, Head> heads;
  for (const StmtRef& c : chain) heads[nameOf(f, c)] = {c->var, c->extent, c->forKind};
  for (size_t k = 0; k < chain.size(); ++k) {
    const Head& h = heads[order[k]];
    chain[k]->var = h.var;
    chain[k]->extent = h.extent;
    chain[k]->forKind = k == 0 && h.kind == ForKind::Parallel ? h.kind : ForKind::Serial;
  }
  return Status::ok();
}

Status fuseLoops(LoopFunc& f, const std::string& outerName, const std::string& innerName) {
  auto site = findLoop(f, outerName);
  if (!site) return site.status();
  FL_RETURN_IF_ERROR(notPinned(f, *site));
  StmtRef o = site->loop;
  if (o->body.size() != 1 || o->body[0]->kind != StmtKind::For ||
      nameOf(f, o->body[0]) != innerName)
    return refuse(f, "loop " + innerName + " is not the only statement of loop " + outerName +
                         ", so they cannot be fused");
  StmtRef in = o->body[0];
  if (in->pinned) return refuse(f, "loop " + innerName + " belongs to a template nest");
  Var v = f.addVar(uniqueName(f, outerName + "_" + innerName), DType::I64);
  ExprRef outerIdx = o->extent == 1    ? intConst(0)
                     : in->extent == 1 ? varRef(v)
                                       : div(varRef(v), intConst(in->extent));
  ExprRef innerIdx = in->extent == 1  ? intConst(0)
                     : o->extent == 1 ? varRef(v)
                                      : binary(BinOp::Mod, varRef(v), intConst(in->extent));
  Subst s = {{o->var.index, outerIdx}, {in->var.index, innerIdx}};
  std::vector<StmtRef> body;
  for (const StmtRef& c : in->body) body.push_back(cloneStmt(c, s));
  StmtRef fused = forLoop(v, o->extent * in->extent, std::move(body));
  fused->forKind = o->forKind == ForKind::Parallel ? ForKind::Parallel : in->forKind;
  replaceAt(*site, {fused});
  return Status::ok();
}

Status vectorizeLoop(LoopFunc& f, const std::string& name) {
  auto site = findLoop(f, name);
  if (!site) return site.status();
  FL_RETURN_IF_ERROR(notPinned(f, *site));
  if (hasFor(site->loop))
    return refuse(f, "loop " + name + " is not innermost, so it cannot be vectorized");
  std::string why = carriedDependence(f, site->loop);
  if (!why.empty()) return refuse(f, why + ", so it cannot be vectorized");
  site->loop->forKind = ForKind::Vectorized;
  return Status::ok();
}

Status parallelizeLoop(LoopFunc& f, const std::string& name) {
  auto site = findLoop(f, name);
  if (!site) return site.status();
  FL_RETURN_IF_ERROR(notPinned(f, *site));
  for (const StmtRef& e : site->enclosing)
    if (e->forKind == ForKind::Parallel || e->forKind == ForKind::Vectorized)
      return refuse(f, "loop " + name + " lies inside " + std::string(forKindName(e->forKind)) +
                           " loop " + nameOf(f, e) + ", so it cannot be parallel");
  Effects fx;
  effectsOf(site->loop, fx);
  for (int32_t b : fx.allocated)
    if (f.buffer(BufferId(b)).kind != BufferKind::Local)
      return refuse(f, "loop " + name + " allocates temp " + f.buffer(BufferId(b)).name +
                           ", which all threads would share; use compute_at or cache_local");
  std::string why = carriedDependence(f, site->loop);
  if (!why.empty()) return refuse(f, why + ", so it cannot be parallel");
  site->loop->forKind = ForKind::Parallel;
  return Status::ok();
}

Status unrollLoop(LoopFunc& f, const std::string& name) {
  auto site = findLoop(f, name);
  if (!site) return site.status();
  FL_RETURN_IF_ERROR(notPinned(f, *site));
  if (site->loop->extent > kMaxUnroll)
    return refuse(f, "loop " + name + " has " + std::to_string(site->loop->extent) +
                         " iterations; unroll takes at most " + std::to_string(kMaxUnroll));
  site->loop->forKind = ForKind::Unrolled;
  return Status::ok();
}

Status serialLoop(LoopFunc& f, const std::string& name) {
  auto site = findLoop(f, name);
  if (!site) return site.status();
  FL_RETURN_IF_ERROR(notPinned(f, *site));
  site->loop->forKind = ForKind::Serial;
  return Status::ok();
}

Status applyStep(LoopFunc& f, const ScheduleStep& s) {
  if (s.op == "split") return splitLoop(f, s.loop, s.factor);
  if (s.op == "reorder") return reorderLoops(f, s.loops);
  if (s.op == "fuse") {
    if (s.loops.size() != 2) return refuse(f, "fuse takes two loops, outer then inner");
    return fuseLoops(f, s.loops[0], s.loops[1]);
  }
  if (s.op == "vectorize") return vectorizeLoop(f, s.loop);
  if (s.op == "parallel") return parallelizeLoop(f, s.loop);
  if (s.op == "unroll") return unrollLoop(f, s.loop);
  if (s.op == "serial") return serialLoop(f, s.loop);
  if (s.op == "compute_at") return computeAt(f, s.buffer, s.loop);
  if (s.op == "inline") return inlineTemp(f, s.buffer);
  if (s.op == "cache_local") return cacheLocal(f, s.buffer, s.loop);
  return refuse(f, "unknown schedule step '" + s.op + "'");
}

}  // namespace fuselens
