// The tuner's candidates for kernels without a product (elementwise,
// broadcast, injective, reductions, row ops): see loopCandidates in tuner.h;
// and the register tiles of blocked convolutions (convCandidates).
#include <algorithm>
#include <functional>

#include "codegen/schedule/schedule_ir_util.h"
#include "codegen/schedule/tuner.h"

namespace fuselens {

namespace {

// The biggest nest no template pinned, its innermost vectorized loop, and
// whether the kernel runs parallel loops: what loop candidates vary.
struct LoopShape {
  std::string vecLoop;
  int64_t vecExtent = 0, work = 0;
  bool parallel = false;
};

int64_t nestWork(const StmtRef& s) {
  int64_t sum = s->body.empty() ? 1 : 0;
  for (const auto& c : s->body) sum += nestWork(c);
  return s->kind == StmtKind::For ? s->extent * sum : sum;
}

LoopShape loopShapeOf(const LoopFunc& f) {
  LoopShape best;
  sched::walk(f.body, [&](const StmtRef& s) {
    if (s->kind == StmtKind::For && s->forKind == ForKind::Parallel) best.parallel = true;
  });
  std::function<void(const StmtRef&, bool)> visit = [&](const StmtRef& s, bool inNest) {
    if (s->kind == StmtKind::For && !inNest) {
      if (s->pinned) return;
      int64_t w = nestWork(s);
      if (w <= best.work) return;
      std::string loop;
      int64_t ext = 0;
      sched::walk(s, [&](const StmtRef& x) {
        if (loop.empty() && x->kind == StmtKind::For && x->forKind == ForKind::Vectorized &&
            !x->pinned) {
          loop = f.var(x->var).name;
          ext = x->extent;
        }
      });
      best.work = w;
      best.vecLoop = loop;
      best.vecExtent = ext;
      return;
    }
    for (const auto& c : s->body) visit(c, inNest);
  };
  if (f.body) visit(f.body, false);
  return best;
}

}  // namespace

std::vector<Schedule> loopCandidates(const Schedule& base, const LoopFunc& scheduled, int lanes) {
  LoopShape sh = loopShapeOf(scheduled);
  struct Ranked {
    double score;
    Schedule s;
  };
  std::vector<Ranked> out;
  // Cost model: one unit per element; a parallel loop pays ~20 us of wake-up,
  // which small kernels never win back; tails cost their scalar iterations.
  double perElemNs = 0.25, wakeNs = 20000;
  double serialNs = double(sh.work) * perElemNs;
  if (sh.parallel) {
    Schedule one = base;
    one.name = "one_thread";
    one.threads = 1;
    out.push_back({serialNs < wakeNs * 4 ? 2.0 : 0.5, one});
  }
  if (!sh.parallel && sh.work >= 4096) {
    Schedule par = base;
    par.name = "parallel_small";
    par.parallelMinWork = 4096;
    out.push_back({serialNs > wakeNs ? 1.5 : 0.3, par});
  }
  for (int64_t w : {int64_t(lanes), int64_t(2 * lanes), int64_t(4 * lanes)}) {
    if (sh.vecLoop.empty() || w < 2 || w >= sh.vecExtent || w > 64) continue;
    double tail = double(sh.vecExtent % w) / double(sh.vecExtent);
    Schedule s = base;
    s.name = "split" + std::to_string(w);
    s.steps = {{"split", sh.vecLoop, {}, w, ""}};
    out.push_back({1.0 - tail, s});
    for (int64_t u : {2, 4}) {
      if (w * u >= sh.vecExtent || w * u > 256) continue;
      Schedule su = base;
      su.name = "split" + std::to_string(w) + "_unroll" + std::to_string(u);
      su.steps = {{"split", sh.vecLoop, {}, w * u, ""},
                  {"split", sh.vecLoop + "i", {}, w, ""},
                  {"unroll", sh.vecLoop + "io", {}, 0, ""}};
      out.push_back({0.9 - double(sh.vecExtent % (w * u)) / double(sh.vecExtent), su});
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Ranked& a, const Ranked& b) { return a.score > b.score; });
  std::vector<Schedule> res;
  for (const Ranked& r : out) res.push_back(r.s);
  return res;
}

namespace {

// The blocked conv of a kernel (itself or in its fused body), if any.
const Node* blockedConv(const Graph& g, const Graph*& owner) {
  for (NodeId id : g.nodeIds()) {
    const Node& n = g.node(id);
    if (n.domain == kFuseLensDomain && n.op == "ConvNCHWc") {
      owner = &g;
      return &n;
    }
    if (n.body)
      if (const Node* c = blockedConv(*n.body, owner)) return c;
  }
  return nullptr;
}

}  // namespace

std::vector<Schedule> convCandidates(const Schedule& base, const Graph& kernel, int lanes,
                                     int registers) {
  const Graph* g = nullptr;
  const Node* n = blockedConv(kernel, g);
  if (!n || n->outputs.empty()) return {};
  auto y = g->value(n->outputs[0]).type.staticShape();
  if (!y || y->size() != 5) return {};
  const int64_t blocks = (*y)[1], ow = (*y)[3], b = (*y)[4];
  const bool depthwise = n->attrs.getInt("group", 1) > 1;
  const int64_t perBlock = (b + lanes - 1) / std::max(lanes, 1);
  struct Ranked {
    double score;
    Schedule s;
  };
  std::vector<Ranked> out;
  for (int64_t p : {4, 5, 6, 7, 8, 10, 12, 14}) {
    for (int64_t o : {1, 2, 4}) {
      // The lowering clamps what does not fit; offering it would only time a duplicate.
      if (p > ow || blocks % o || (depthwise && o > 1)) continue;
      if ((p * o + o) * perBlock + 1 > registers) continue;
      // FMAs per load (one broadcast per pixel, one weight vector per block),
      // discounted by the share of the row's last tile left empty.
      int64_t tiles = (ow + p - 1) / p;
      double waste = double(tiles * p - ow) / double(tiles * p);
      double score = double(p * o) / double(p + o) * (1 - 0.5 * waste);
      // Past ~24 accumulators the compiler starts spilling them (measured on
      // the bench CNN: 14x2 and 7x4 ran slower than 7x2), so rank those last.
      if (p * o * perBlock > 24) score *= 0.5;
      Schedule s = base;
      s.name = "conv" + std::to_string(p) + "x" + std::to_string(o);
      s.conv = {p, o};
      out.push_back({score, s});
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Ranked& a, const Ranked& b) { return a.score > b.score; });
  std::vector<Schedule> res;
  for (const Ranked& r : out) res.push_back(r.s);
  return res;
}

}  // namespace fuselens
