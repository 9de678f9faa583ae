// Internal to the schedule primitives: finding a loop by name, substituting
// counters, cloning statements, affine index analysis and read/write sets.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "codegen/loop/loop_ir.h"
#include "core/support/status.h"

namespace fuselens::sched {

// A loop and where it sits: its parent's body, its position there, the loops
// around it (outermost first) and the top-level statement holding it.
struct LoopSite {
  StmtRef loop;
  std::vector<StmtRef>* siblings = nullptr;
  size_t pos = 0;
  std::vector<StmtRef> enclosing;
  StmtRef top;
};

// Wraps a body that is a single For into a Seq so every loop has a parent body.
void normalize(LoopFunc& f);
Expected<LoopSite> findLoop(LoopFunc& f, const std::string& name);
std::optional<BufferId> findBuffer(const LoopFunc& f, const std::string& name);
// "i1" when free, else "i1_2", "i1_3", ... (neither a var nor a buffer name).
std::string uniqueName(const LoopFunc& f, const std::string& base);

using Subst = std::map<int32_t, ExprRef>;  // var index -> replacement
ExprRef substitute(const ExprRef& e, const Subst& s);
// Rebuilds e children first, then hands each node (with its new children) to fn.
ExprRef mapExprsBottomUp(const ExprRef& e, const std::function<ExprRef(const ExprRef&)>& fn);
// Rebuilds a load's index or drops loads: replaces Load(buffer) nodes.
ExprRef mapLoads(const ExprRef& e, BufferId b, const std::function<ExprRef(const ExprRef&)>& fn);
// A deep copy with `s` applied; with `fresh`, every loop inside gets a new
// counter named base + suffix (so a duplicated body keeps loop names unique).
StmtRef cloneStmt(const StmtRef& st, Subst s, LoopFunc* fresh = nullptr,
                  const std::string& suffix = "");

// index = c + sum(coef[v] * v) over var indices; nullopt when not affine.
struct Affine {
  std::map<int32_t, int64_t> coef;
  int64_t c = 0;
};
std::optional<Affine> affineOf(const ExprRef& e);
ExprRef affineExpr(const LoopFunc& f, const Affine& a);

bool usesVar(const ExprRef& e, int32_t var);
bool stmtUsesVar(const StmtRef& s, int32_t var);
// Buffers loaded / stored anywhere under s; vars assigned; locals declared.
struct Effects {
  std::set<int32_t> loads, stores, assigned, declared, allocated;
};
void effectsOf(const StmtRef& s, Effects& e);
bool hasFor(const StmtRef& s);
// Calls fn on every statement under s (s included), parents before children.
void walk(const StmtRef& s, const std::function<void(const StmtRef&)>& fn);
void walkExprs(const ExprRef& e, const std::function<void(const ExprRef&)>& fn);
// Every expression a statement holds directly (index, value).
void forEachExpr(const StmtRef& s, const std::function<void(const ExprRef&)>& fn);

}  // namespace fuselens::sched
