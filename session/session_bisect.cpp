// Session::bisect (session/bisect_report.h): variants of the optimized graph,
// each compiled and compared with one set of reference runs.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <set>

#include "passes/inline_group.h"
#include "session/compared_runs.h"
#include "session/session.h"

namespace fuselens {
namespace {

bool isGroup(const Node& n) { return n.op == kFusedOp && n.domain == kFuseLensDomain; }

std::string watchedWords(const BisectReport& r) {
  return r.output.empty() ? "every graph output" : r.output;
}

// "3, 7" or, past six groups, "0, 1, 2 ... 41 (42 groups)".
std::string joinGroups(const std::vector<int>& groups) {
  std::string s;
  const bool shorten = groups.size() > 6;
  for (size_t i = 0; i < groups.size(); ++i) {
    if (shorten && i == 3) {
      s += " ... " + std::to_string(groups.back()) + " (" + std::to_string(groups.size()) +
           " groups)";
      break;
    }
    s += (s.empty() ? "" : ", ") + std::to_string(groups[i]);
  }
  return s;
}

// Where a planted fault lives, in terms that survive a change of kernels:
// the group it runs, or the node's name when it runs one op.
struct FaultSite {
  int group = -1;
  std::string node;
  double eps = 0;
};

std::vector<FaultSite> faultSites(const Perturbations& p, const CompiledModule& module,
                                  const Graph& g) {
  std::vector<FaultSite> sites;
  for (const auto& [wanted, eps] : p)
    for (const KernelInfo& k : module.kernels()) {
      if (!kernelMatches(k.name, wanted) || !g.hasNode(k.node)) continue;
      const Node& n = g.node(k.node);
      sites.push_back({isGroup(n) ? int(n.attrs.getInt("group", -1)) : -1, n.name, eps});
    }
  return sites;
}

// The faults of `sites` on the kernels of `module` that run the same group or
// node; a site the variant no longer has (its group split) plants nothing.
Perturbations faultsIn(const std::vector<FaultSite>& sites, const CompiledModule& module,
                       const Graph& g) {
  Perturbations p;
  for (const FaultSite& s : sites)
    for (const KernelInfo& k : module.kernels()) {
      if (!g.hasNode(k.node)) continue;
      const Node& n = g.node(k.node);
      const bool same = s.group >= 0 ? isGroup(n) && n.attrs.getInt("group", -1) == s.group
                                     : !isGroup(n) && n.name == s.node;
      if (same) p[k.name] = s.eps;
    }
  return p;
}

}  // namespace

std::string BisectReport::verdict() const {
  const std::string watched = watchedWords(*this);
  const std::string compiles = std::to_string(trials.size()) + " compiles";
  const BisectTrial* last = trials.empty() ? nullptr : &trials.back();
  switch (outcome) {
    case Outcome::Within:
      return "PASS: " + watched + " within rounding with the whole pipeline; nothing to bisect";
    case Outcome::NotFusion:
      return "NOT FUSION: " + (last ? last->worst : watched) + " stays " +
             (last ? last->status : "beyond rounding") +
             " with every group split into single-op kernels; compare --isolated names the "
             "kernel (" +
             compiles + ")";
    case Outcome::AtImport:
      return "AT IMPORT: " + (last ? trials.front().worst : watched) + " is " +
             trials.front().status +
             " compiled straight from the imported graph, before any pass; compare --isolated "
             "names the kernel (" +
             compiles + ")";
    case Outcome::Found:
      break;
  }
  if (by == BisectBy::Passes) {
    const BisectTrial& t = trials[size_t(passStep)];
    return "FOUND: " + t.worst + " leaves rounding after pass " + std::to_string(passStep) + ", " +
           pass + " (" + t.status + "; " + compiles + ")";
  }
  std::string which = (groups.size() == 1 ? "group " : "groups ") + joinGroups(groups);
  std::string names;
  for (const std::string& k : kernels) names += (names.empty() ? "" : ", ") + k;
  if (!names.empty()) which += " (" + names + ")";
  return "FOUND: splitting " + which + " into single-op kernels brings " + watched +
         " within rounding (" + compiles + ")";
}

Expected<BisectReport> Session::bisect(const std::map<std::string, TensorData>& inputs,
                                       const BisectRequest& request, const CompareOptions& opts,
                                       const Progress& progress, const CancelToken& cancel) {
  if (!model_) return Status::error("no model is open");
  if (!compiled_) FL_RETURN_IF_ERROR(compile(compileOptions_, progress, cancel));
  const Graph& final = finalGraph();
  if (!request.output.empty()) {
    std::string names;
    bool found = false;
    for (ValueId o : final.outputs()) {
      found |= final.value(o).name == request.output;
      names += (names.empty() ? "" : ", ") + final.value(o).name;
    }
    if (!found)
      return Status::error("is not a graph output; the outputs are " + names,
                           "--output " + request.output);
  }
  report(progress, 0.02, "eager reference runs");
  auto refs = runReferences(model_->graph, inputs, opts.rounding(), cancel);
  if (!refs) return refs.status();
  const std::vector<FaultSite> sites = faultSites(perturbations, *compiled_, final);

  BisectReport rep;
  rep.by = request.by;
  rep.output = request.output;
  // Compiles `g` (its own memory plan unless `plan` is given), runs it with the
  // faults that still have a kernel, and judges the watched outputs. The final
  // graph itself (`isFinal`) runs the module the session already compiled.
  auto trial = [&](const std::string& what, const Graph& g,
                   const std::shared_ptr<const BufferPlan>& plan,
                   bool isFinal) -> Expected<BisectTrial> {
    if (cancel.cancelled()) return Status::error("cancelled");
    report(progress, std::min(0.95, 0.05 + 0.05 * double(rep.trials.size())), what);
    std::unique_ptr<CompiledModule> own;
    if (!isFinal) {
      CompileOptions co = compileOptions_;
      co.bufferPlan = plan;
      auto module = compileGraph(g, co, {}, cancel);
      if (!module) return module.status();
      own = std::move(*module);
    }
    const CompiledModule& module = isFinal ? *compiled_ : *own;
    auto run = runPerturbed(module, inputs, faultsIn(sites, module, g), cancel);
    if (!run) return run.status();
    CompareReport cmp = compareBoundaries(model_->graph, g, *refs, *run, module.kernels(), opts);
    BisectTrial t{what, module.kernels().size(), true, "", "", 0};
    std::pair<bool, double> worst{false, -1};  // (diverges, ratio) of the worst output so far
    for (const CompareRow& r : cmp.rows) {
      if (!r.isGraphOutput || (!request.output.empty() && r.name != request.output)) continue;
      const std::pair<bool, double> key{!r.judgedOk(), errorRatio(r)};
      if (key > worst) worst = key, t.worst = r.name, t.status = rowStatus(r), t.ratio = key.second;
      t.within &= r.judgedOk();
    }
    rep.trials.push_back(t);
    return t;
  };

  if (request.by == BisectBy::Passes) {
    for (size_t k = 0; k < snapshots_.size(); ++k) {
      const Snapshot& s = snapshots_[k];
      auto t = trial(k == 0 ? "imported graph" : "after " + s.label, s.graph(), s.record.bufferPlan,
                     k + 1 == snapshots_.size());
      if (!t) return t.status();
      if (!t->within && rep.outcome == BisectReport::Outcome::Within) {
        rep.outcome = k == 0 ? BisectReport::Outcome::AtImport : BisectReport::Outcome::Found;
        rep.pass = s.label;
        rep.passStep = int(k);
      }
    }
    report(progress, 1.0, "bisected");
    return rep;
  }

  std::vector<int> all;
  std::map<int, std::string> kernelOfGroup;
  for (const KernelInfo& k : compiled_->kernels())
    if (final.hasNode(k.node) && isGroup(final.node(k.node))) {
      const int gid = int(final.node(k.node).attrs.getInt("group", -1));
      all.push_back(gid);
      kernelOfGroup[gid] = k.name;
    }
  std::sort(all.begin(), all.end());
  std::map<std::set<int>, bool> seen;  // split set -> within
  auto fixes = [&](const std::set<int>& split) -> Expected<bool> {
    if (auto it = seen.find(split); it != seen.end()) return it->second;
    Graph g = final;
    std::vector<NodeId> groupNodes;
    for (NodeId n : g.nodeIds())
      if (isGroup(g.node(n)) && split.count(int(g.node(n).attrs.getInt("group", -1))))
        groupNodes.push_back(n);
    for (NodeId n : groupNodes) inlineGroup(g, n);
    std::vector<int> list(split.begin(), split.end());
    auto t = trial(split.empty() ? "final graph" : "groups " + joinGroups(list) + " split", g,
                   nullptr, split.empty());
    if (!t) return t.status();
    return seen[split] = t->within;
  };
  auto base = fixes({});
  if (!base) return base.status();
  if (*base) return rep;
  std::set<int> everything(all.begin(), all.end());
  auto whole = fixes(everything);
  if (!whole) return whole.status();
  if (!*whole) {
    rep.outcome = BisectReport::Outcome::NotFusion;
    return rep;
  }
  // The smallest part of `candidates` that, split together with `context`,
  // fixes the output; splitting all of them with it is known to.
  std::function<Expected<std::vector<int>>(std::vector<int>, std::set<int>)> minimize =
      [&](std::vector<int> candidates, std::set<int> context) -> Expected<std::vector<int>> {
    if (candidates.size() <= 1) return candidates;
    const size_t half = candidates.size() / 2;
    std::vector<int> a(candidates.begin(), candidates.begin() + long(half));
    std::vector<int> b(candidates.begin() + long(half), candidates.end());
    for (const auto* part : {&a, &b}) {
      std::set<int> trySet = context;
      trySet.insert(part->begin(), part->end());
      auto ok = fixes(trySet);
      if (!ok) return ok.status();
      if (*ok) return minimize(*part, context);
    }
    // Both halves hold a culprit: minimize one with all of the other split,
    // then the other with only what the first needs.
    std::set<int> withB = context;
    withB.insert(b.begin(), b.end());
    auto needA = minimize(a, withB);
    if (!needA) return needA.status();
    std::set<int> withA = context;
    withA.insert(needA->begin(), needA->end());
    auto needB = minimize(b, withA);
    if (!needB) return needB.status();
    needA->insert(needA->end(), needB->begin(), needB->end());
    return needA;
  };
  auto culprits = minimize(all, {});
  if (!culprits) return culprits.status();
  std::sort(culprits->begin(), culprits->end());
  rep.outcome = BisectReport::Outcome::Found;
  rep.groups = *culprits;
  for (int gid : rep.groups) rep.kernels.push_back(kernelOfGroup[gid]);
  report(progress, 1.0, "bisected");
  return rep;
}

}  // namespace fuselens
