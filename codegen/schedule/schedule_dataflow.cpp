// compute_at: moves the nest that fills a temp into the loop that reads it and
// shrinks the temp to the slice one iteration needs. It works on the kernel's
// top-level nests (the statements under lowering's chain of Allocate
// wrappers) and on affine indices; anything else is refused with the reason,
// and every check runs before the first change. See schedule_prims.h.
#include "codegen/schedule/schedule_dataflow_util.h"
#include "codegen/schedule/schedule_prims.h"

namespace fuselens {

using namespace sched;

Status computeAt(LoopFunc& f, const std::string& bufName, const std::string& loopName) {
  auto b = tempNamed(f, bufName);
  if (!b) return b.status();
  TopLevel top = topLevel(f);
  if (!top.list) return refuse(f, "kernel " + f.name + " has no loop nests");
  auto prod = producerOf(f, top, *b);
  if (!prod) return prod.status();
  if (prod->nest->pinned)
    return refuse(f, "temp " + bufName + " is written by a template nest, whose loops are fixed");
  auto site = findLoop(f, loopName);
  if (!site) return site.status();
  size_t cpos = top.list->size();
  for (size_t i = 0; i < top.list->size(); ++i)
    if ((*top.list)[i] == site->top) cpos = i;
  if (cpos == top.list->size() || cpos <= prod->pos)
    return refuse(f, "loop " + loopName + " is not in a nest after the one writing " + bufName);
  StmtRef L = site->loop;
  if (countLoads(L, *b) != countLoads(f.body, *b))
    return refuse(f, "temp " + bufName + " is read outside loop " + loopName);
  // Nothing between the producer and the consumer may write what the producer reads.
  Effects pfx;
  effectsOf(prod->nest, pfx);
  for (size_t i = prod->pos + 1; i <= cpos; ++i) {
    Effects fx;
    effectsOf((*top.list)[i], fx);
    for (int32_t w : fx.stores)
      if (pfx.loads.count(w))
        return refuse(f, "the nest writing " + bufName + " reads " + f.buffer(BufferId(w)).name +
                             ", which is written before loop " + loopName);
  }
  for (int32_t v : pfx.assigned)
    if (!pfx.declared.count(v))
      return refuse(f, "the nest writing " + bufName + " updates a local from outside");
  if (!allocatedAtTop(top, *b))
    return refuse(f, "temp " + bufName + " is not allocated at the kernel's top level");
  // The producer's outer loops pair with the consumer's loops down to L.
  std::vector<StmtRef> cons = site->enclosing;
  cons.push_back(L);
  std::vector<StmtRef> chain = {prod->nest};
  while (chain.size() < cons.size() && chain.back()->body.size() == 1 &&
         chain.back()->body[0]->kind == StmtKind::For)
    chain.push_back(chain.back()->body[0]);
  if (chain.size() != cons.size())
    return refuse(f, "the nest writing " + bufName + " has no " + std::to_string(cons.size()) +
                         " perfectly nested outer loops to pair with loop " + loopName + "'s");
  Subst sub;
  std::set<int32_t> outer;
  for (size_t k = 0; k < cons.size(); ++k) {
    if (chain[k]->extent != cons[k]->extent)
      return refuse(f, "loop " + f.var(chain[k]->var).name + " of the nest writing " + bufName +
                           " and loop " + f.var(cons[k]->var).name + " differ in extent");
    sub[chain[k]->var.index] = varRef(f.var(cons[k]->var));
    outer.insert(cons[k]->var.index);
  }
  StmtRef inner = chain.back();
  Effects ifx;
  for (const StmtRef& s : inner->body) effectsOf(s, ifx);
  bool innerParallel = false;
  for (const StmtRef& s : inner->body)
    walk(s, [&](const StmtRef& t) {
      innerParallel |= t->kind == StmtKind::For && t->forKind == ForKind::Parallel;
    });
  if (innerParallel)
    return refuse(f, "the nest writing " + bufName + " runs a parallel loop inside");
  std::vector<StmtRef> moved;
  for (const StmtRef& s : inner->body) moved.push_back(cloneStmt(s, sub));
  auto pAcc = accessesOf(seq(moved), *b, outer, loopExtents(seq(moved)));
  auto cAcc = accessesOf(seq(L->body), *b, outer, loopExtents(seq(L->body)));
  if (!pAcc || !cAcc || pAcc->empty() || cAcc->empty() || (*pAcc)[0].base != (*cAcc)[0].base)
    return refuse(f, "temp " + bufName + " is not read per iteration of loop " + loopName +
                         " at the positions its nest writes then");
  int64_t lo = (*pAcc)[0].lo, hi = (*pAcc)[0].hi;
  for (const Access& a : *pAcc) lo = std::min(lo, a.lo), hi = std::max(hi, a.hi);
  for (const Access& a : *cAcc)
    if (a.lo < lo || a.hi > hi)
      return refuse(f, "loop " + loopName + " reads " + bufName +
                           " outside the slice one iteration of its nest writes");
  if (hi - lo + 1 > kMaxSlice)
    return refuse(f, "the slice of " + bufName + " per iteration of loop " + loopName + " has " +
                         std::to_string(hi - lo + 1) + " elements, more than a local holds");
  // Mutate: the temp becomes a per-iteration local holding the slice.
  unwrapAllocate(top, *b);
  Buffer& buf = f.buffers[b->index];
  buf.kind = BufferKind::Local;
  buf.shape = {hi - lo + 1};
  std::vector<StmtRef> body;
  for (const StmtRef& s : moved) body.push_back(rewriteAccesses(f, s, *b, *b, {}, outer, lo));
  for (const StmtRef& s : L->body) body.push_back(rewriteAccesses(f, s, *b, *b, {}, outer, lo));
  L->body = {allocate(buf, std::move(body))};
  top.list->erase(top.list->begin() + std::ptrdiff_t(prod->pos));
  return Status::ok();
}

}  // namespace fuselens
