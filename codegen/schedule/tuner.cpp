// See tuner.h. Per kernel: extract it as a one-node graph (constants stay
// constants, so B is prepacked as in the real compile), time the baseline, then
// candidates in cost-model order while the kernel's share of the budget lasts.
#include "codegen/schedule/tuner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "codegen/lower/lower.h"
#include "codegen/target.h"
#include "core/ops/registry.h"
#include "core/support/atomic_file.h"

namespace fuselens {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::string attrText(const Attributes& a) {
  std::string s;
  for (const auto& [name, v] : a.all()) {
    std::string val;
    if (auto i = std::get_if<int64_t>(&v))
      val = std::to_string(*i);
    else if (auto d = std::get_if<double>(&v))
      val = std::to_string(*d);
    else if (auto is = std::get_if<std::vector<int64_t>>(&v))
      val = formatShape(*is);
    else
      continue;
    s += (s.empty() ? "" : ",") + name + "=" + val;
  }
  return s.empty() ? "" : "{" + s + "}";
}

// The product a kernel computes, when it holds a MatMul or Gemm: M, N, K.
std::optional<std::array<int64_t, 3>> productOf(const Graph& body) {
  for (NodeId id : body.nodeIds()) {
    const Node& n = body.node(id);
    if (n.op != "MatMul" && n.op != "Gemm") continue;
    auto a = body.value(n.inputs[0]).type.staticShape();
    auto b = body.value(n.inputs[1]).type.staticShape();
    if (!a || !b || a->size() < 2 || b->size() < 2) continue;
    bool ta = n.op == "Gemm" && n.attrs.getInt("transA", 0);
    bool tb = n.op == "Gemm" && n.attrs.getInt("transB", 0);
    int64_t m = ta ? a->back() : (*a)[a->size() - 2], k = ta ? (*a)[a->size() - 2] : a->back();
    int64_t nn = tb ? (*b)[b->size() - 2] : b->back();
    return std::array<int64_t, 3>{m, nn, k};
  }
  return std::nullopt;
}

Graph kernelAlone(const Graph& g, const Node& n) {
  Graph sub;
  sub.name = n.name;
  std::vector<ValueId> ins;
  for (ValueId v : n.inputs) {
    if (!v.valid()) {
      ins.push_back(ValueId());
      continue;
    }
    const Value& val = g.value(v);
    ins.push_back(val.constant ? sub.addConstant(val.name, val.constant)
                               : sub.addInput(val.name, val.type));
  }
  std::vector<OutputSpec> outs;
  for (ValueId v : n.outputs) outs.push_back({g.value(v).name, g.value(v).type});
  NodeId id = sub.addNode(n.op, ins, outs, n.attrs, n.name);
  sub.mutableNode(id).domain = n.domain;
  sub.mutableNode(id).body = n.body;
  for (ValueId o : sub.node(id).outputs) sub.addOutput(o);
  return sub;
}

std::map<std::string, TensorData> seededInputs(const Graph& g) {
  std::map<std::string, TensorData> in;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> d(-1, 1);
  for (ValueId v : g.inputs()) {
    TensorData t(g.value(v).type.dtype, *g.value(v).type.staticShape());
    if (t.dtype == DType::F32)
      for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = d(rng);
    in[g.value(v).name] = std::move(t);
  }
  return in;
}

// Median seconds of the kernel under `s`; nullopt when it does not compile or run.
std::optional<double> measure(const Graph& sub, const std::map<std::string, TensorData>& in,
                              const TuneOptions& o, const Schedule& s, double deadlineSeconds,
                              Clock::time_point t0) {
  CompileOptions co = o.compile;
  co.schedule = s;
  co.tuningLog = "";
  auto m = compileGraph(sub, co);
  if (!m) return std::nullopt;
  std::map<std::string, TensorData> out;
  if (!(*m)->runInto(in, out).isOk()) return std::nullopt;  // warm-up
  std::vector<double> t;
  for (int r = 0; r < o.runsPerCandidate; ++r) {
    auto r0 = Clock::now();
    if (!(*m)->runInto(in, out).isOk()) return std::nullopt;
    t.push_back(since(r0));
    if (since(t0) > deadlineSeconds && t.size() >= 2) break;
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

std::string kernelSignature(const Graph& g, const Node& n) {
  std::string s;
  if (n.body) {
    s = "Fused[";
    auto order = n.body->topoOrder();
    bool first = true;
    for (NodeId id : order.value_or(n.body->nodeIds())) {
      const Node& b = n.body->node(id);
      s += (first ? "" : ",") + b.op + attrText(b.attrs);
      first = false;
    }
    s += "]";
  } else {
    s = n.op + attrText(n.attrs);
  }
  s += "(";
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (i) s += ",";
    if (!n.inputs[i].valid()) continue;
    const Value& v = g.value(n.inputs[i]);
    s += v.type.str() + (v.constant ? "c" : "");
  }
  s += ")->(";
  // A tapped variant keeps its group's signature, so it gets the group's tuned schedule.
  for (size_t i = 0; i < n.outputs.size() - tapOutputCount(n); ++i)
    s += (i ? "," : "") + g.value(n.outputs[i]).type.str();
  return s + ")";
}

Expected<TuningLog> TuningLog::load(const std::string& path) {
  std::ifstream f(path);
  if (!f) return TuningLog();
  std::stringstream ss;
  ss << f.rdbuf();
  return parse(ss.str(), path);
}

Status TuningLog::save(const std::string& path) const {
  nlohmann::json j = {{"version", 1}, {"entries", nlohmann::json::array()}};
  for (const TuningEntry& e : entries_)
    j["entries"].push_back({{"target", e.target},
                            {"signature", e.signature},
                            {"schedule", nlohmann::json::parse(e.schedule.toJson())},
                            {"seconds", e.seconds},
                            {"default_seconds", e.defaultSeconds}});
  return writeFileAtomically(path, j.dump(2) + "\n");
}

std::optional<Schedule> TuningLog::find(const std::string& target,
                                        const std::string& signature) const {
  for (const TuningEntry& e : entries_)
    if (e.target == target && e.signature == signature) return e.schedule;
  return std::nullopt;
}

void TuningLog::put(TuningEntry e) {
  for (TuningEntry& old : entries_)
    if (old.target == e.target && old.signature == e.signature) {
      old = std::move(e);
      return;
    }
  entries_.push_back(std::move(e));
}

std::vector<Schedule> matmulCandidates(const Schedule& base, int64_t m, int64_t n, int64_t k,
                                       int lanes, int registers) {
  struct Ranked {
    double score;
    Schedule s;
  };
  std::vector<Ranked> tiles;
  for (int64_t mr : {1, 2, 3, 4, 5, 6, 8, 10, 12, 14, 16}) {
    for (int64_t nv = 1; nv <= 4 && nv * lanes <= 64; ++nv) {
      int64_t nr = nv * lanes;
      if (mr * nv + nv + 1 > registers || mr > std::max<int64_t>(m, 1)) continue;
      // FMAs per loaded vector or broadcast, discounted by the tails' share.
      double intensity = double(mr * nv) / double(mr + nv);
      double rowTail = double(m % mr) / double(m), colTail = double(n % nr) / double(n);
      double score = intensity * (1 - 0.5 * rowTail) * (1 - 0.5 * colTail);
      Schedule s = base;
      s.name = "mr" + std::to_string(mr) + "_nr" + std::to_string(nr);
      s.matmul.enabled = true;
      s.matmul.mr = mr;
      s.matmul.nr = nr;
      s.matmul.ncPanels = 0;
      tiles.push_back({score, s});
    }
  }
  std::stable_sort(tiles.begin(), tiles.end(),
                   [](const Ranked& a, const Ranked& b) { return a.score > b.score; });
  std::vector<Schedule> out;
  for (const Ranked& r : tiles) out.push_back(r.s);
  // Cache blocking and loop order for the three best tiles.
  std::vector<Schedule> variants;
  for (size_t i = 0; i < std::min<size_t>(3, tiles.size()); ++i)
    for (int64_t nc : {1, 4, 16})
      for (bool rows : {false, true}) {
        Schedule s = tiles[i].s;
        s.matmul.ncPanels = nc;
        s.matmul.rowsOuter = rows;
        s.name += "_nc" + std::to_string(nc) + (rows ? "_rows" : "");
        variants.push_back(s);
      }
  // Interleave: the best tiles first, then blocking variants; for small
  // products, the best tile on one thread first (waking the pool may not pay).
  std::vector<Schedule> merged;
  if (m * n * k < (int64_t(1) << 22) && !out.empty()) {
    Schedule one = out[0];
    one.name += "_one_thread";
    one.parallelOuter = false;
    merged.push_back(one);
  }
  for (size_t i = 0; i < std::max(out.size(), variants.size()); ++i) {
    if (i < out.size() && i < 8) merged.push_back(out[i]);
    if (i < variants.size()) merged.push_back(variants[i]);
  }
  (void)k;
  return merged;
}

Expected<std::vector<KernelTuneResult>> tuneGraph(const Graph& g, const TuneOptions& opts,
                                                  TuningLog& log, const Progress& progress,
                                                  const CancelToken& cancel) {
  auto order = g.topoOrder();
  if (!order) return Status::error("the graph has a cycle", "graph '" + g.name + "'");
  const CpuTarget& target = hostTarget();
  Schedule base = opts.compile.schedule ? *opts.compile.schedule : Schedule::defaultsFor(target);
  int registers = target.vectorBits >= 512 ? 32 : 16;

  struct Job {
    const Node* node;
    std::array<int64_t, 3> mnk;
    bool loops = false;  // a kernel without a product: loop candidates
    bool conv = false;   // ...holding a blocked conv: its register tiles too
  };
  auto holdsConv = [](const Node& n) {
    if (n.domain == kFuseLensDomain && n.op == "ConvNCHWc") return true;
    if (!n.body) return false;
    for (NodeId b : n.body->nodeIds())
      if (n.body->node(b).domain == kFuseLensDomain && n.body->node(b).op == "ConvNCHWc")
        return true;
    return false;
  };
  std::vector<Job> jobs;
  for (NodeId id : *order) {
    const Node& n = g.node(id);
    if (!needsKernel(g, n)) continue;
    std::optional<std::array<int64_t, 3>> p;
    if (n.body) {
      p = productOf(*n.body);
    } else if (n.op == "MatMul" || n.op == "Gemm") {
      Graph sub = kernelAlone(g, n);
      p = productOf(sub);
    }
    if (p && (*p)[0] * (*p)[1] * (*p)[2] >= base.matmul.minWork)
      jobs.push_back({&n, *p});
    else if (!p && n.op != "Conv" && n.op != "If" && n.op != "Loop" && n.op != "Scan")
      jobs.push_back({&n, {0, 0, 0}, true, holdsConv(n)});
  }
  // Products and convs first and with three shares of the budget each: they
  // gain most (and have the most candidates).
  auto shareOf = [](const Job& j) { return j.loops && !j.conv ? 1.0 : 3.0; };
  std::stable_partition(jobs.begin(), jobs.end(), [](const Job& j) { return !j.loops || j.conv; });
  double shares = 0;
  for (const Job& j : jobs) shares += shareOf(j);
  std::vector<KernelTuneResult> results;
  auto t0 = Clock::now();
  for (size_t j = 0; j < jobs.size(); ++j) {
    if (cancel.cancelled()) break;
    double left = opts.budgetSeconds - since(t0);
    if (left <= 0) break;
    double share = shareOf(jobs[j]);
    double deadline = since(t0) + left * share / shares;
    shares -= share;
    const Node& n = *jobs[j].node;
    Graph sub = kernelAlone(g, n);
    std::vector<Schedule> cands;
    if (jobs[j].loops) {
      auto lf = lowerKernel(sub, sub.node(sub.nodeIds().back()), "k", base);
      if (!lf) continue;
      applyDefaultSteps(*lf, base);
      cands = loopCandidates(base, *lf, target.vectorLanes());
      // A conv's best three tiles, then one thread or the pool, then the other tiles.
      auto tiles = convCandidates(base, sub, target.vectorLanes(), registers);
      cands.insert(cands.begin(), tiles.begin(), tiles.begin() + std::min<size_t>(3, tiles.size()));
      if (tiles.size() > 3) cands.insert(cands.end(), tiles.begin() + 3, tiles.end());
      if (cands.empty()) continue;
    }
    auto in = seededInputs(sub);
    KernelTuneResult r;
    r.kernel = n.name.empty() ? n.op : n.name;
    r.signature = kernelSignature(g, n);
    r.best = base;
    auto baseline = measure(sub, in, opts, base, deadline, t0);
    if (!baseline) continue;
    r.defaultSeconds = r.bestSeconds = *baseline;
    r.measured = 1;
    auto [m, nn, k] = jobs[j].mnk;
    if (!jobs[j].loops) cands = matmulCandidates(base, m, nn, k, target.vectorLanes(), registers);
    if (cands.size() > opts.maxCandidatesPerKernel) cands.resize(opts.maxCandidatesPerKernel);
    for (size_t c = 0; c < cands.size(); ++c) {
      if (cancel.cancelled() || since(t0) > deadline) break;
      if (cands[c] == base) continue;
      auto t = measure(sub, in, opts, cands[c], deadline, t0);
      ++r.measured;
      if (t && *t < r.bestSeconds) {
        r.bestSeconds = *t;
        r.best = cands[c];
      }
      report(progress, std::min(1.0, since(t0) / opts.budgetSeconds),
             "kernel " + std::to_string(j + 1) + "/" + std::to_string(jobs.size()) + " " +
                 r.kernel + ": " + std::to_string(c + 1) + "/" + std::to_string(cands.size()) +
                 " candidates");
    }
    log.put({target.key(), r.signature, r.best, r.bestSeconds, r.defaultSeconds});
    results.push_back(std::move(r));
  }
  report(progress, 1.0, "tuned " + std::to_string(results.size()) + " kernels");
  return results;
}

}  // namespace fuselens
