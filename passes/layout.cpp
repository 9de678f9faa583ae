// The layout pass (contract in layout.h). Analysis -> plan -> rewrite:
//
//   1. classify: which nodes can run blocked (4-D f32 static shapes; Conv with
//      constant weights, group 1 or depthwise; pools without ceil_mode;
//      elementwise ops whose other operands are full, scalar or per-channel);
//   2. plan: connected regions of such nodes; a region without a Conv stays
//      NCHW (its transforms would cost more than they save), and so do the
//      elementwise ops ending a region that read a full operand from outside
//      it (trimTail: a residual Add of the block's input);
//   3. rewrite each node of a kept region as its blocked form with a ToNCHWc
//      on every full input and a FromNCHWc on every output:
//
//        x -> Conv -> Relu -> y        x -> To -> ConvNCHWc -> From -> To -> Relu -> From -> y
//
//   4. cancel: From -> To pairs of one block drop out, leaving transforms only
//      at the region's boundary:   x -> To -> ConvNCHWc -> Relu -> From -> y
//
// A blocked value takes the plain value's name when the plain one is gone, and
// <name>_nchw<b>c when both live (at a boundary).
#include "passes/layout.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "core/ops/registry.h"
#include "passes/layout_groups.h"
#include "passes/rewriter.h"

namespace fuselens {
namespace {

enum class Role { Conv, Pool, GlobalPool, Concat, Elementwise };
enum class Operand { Full, Scalar, PerChannel, Absent, Bad };

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

bool isOp(const Node& n, const char* op, const char* domain = "") {
  return n.op == op && n.domain == domain;
}

// The static shape of a plain 4-D f32 value; nullopt otherwise.
std::optional<std::vector<int64_t>> plain4d(const Graph& g, ValueId v) {
  if (!v.valid()) return std::nullopt;
  const Value& val = g.value(v);
  auto s = val.type.rankKnown ? val.type.staticShape() : std::nullopt;
  if (!s || s->size() != 4 || val.type.dtype != DType::F32 || val.layout.blocked())
    return std::nullopt;
  return s;
}

Operand operandKind(const Graph& g, ValueId v, const std::vector<int64_t>& out) {
  if (!v.valid()) return Operand::Absent;
  const Value& val = g.value(v);
  auto s = val.type.rankKnown ? val.type.staticShape() : std::nullopt;
  if (!s || val.layout.blocked()) return Operand::Bad;
  if (*s == out && val.type.dtype == DType::F32) return Operand::Full;
  int64_t numel = std::accumulate(s->begin(), s->end(), int64_t(1), std::multiplies<>());
  if (numel == 1 && s->size() <= 4) return Operand::Scalar;  // broadcasts to any rank alike
  bool perChannel =
      (*s == std::vector<int64_t>{out[1], 1, 1} || *s == std::vector<int64_t>{1, out[1], 1, 1});
  if (perChannel && val.constant && val.type.dtype == DType::F32) return Operand::PerChannel;
  // A computed tensor with the same channels that broadcasts over N, H or W
  // (squeeze-excite's [N,C,1,1] scale) blocks like a full operand: its lanes
  // line up with the output's.
  bool sameChannels = s->size() == 4 && (*s)[1] == out[1];
  for (int d : {0, 2, 3}) sameChannels = sameChannels && ((*s)[d] == out[d] || (*s)[d] == 1);
  if (sameChannels && !val.constant && val.type.dtype == DType::F32) return Operand::Full;
  return Operand::Bad;
}

// Explicit [top, left, bottom, right] pads of a 2-D window op whose output has
// spatial size `out`; an error sentence when they cannot be made explicit.
Expected<std::vector<int64_t>> explicitPads(const Node& n, const std::vector<int64_t>& in,
                                            const std::vector<int64_t>& kernel,
                                            const std::vector<int64_t>& out, bool pool) {
  auto ints = [&](const char* name, size_t count, int64_t fill) {
    auto v = n.attrs.getInts(name);
    return v ? *v : std::vector<int64_t>(count, fill);
  };
  auto s = ints("strides", 2, 1), d = ints("dilations", 2, 1), p = ints("pads", 4, 0);
  if (s.size() != 2 || d.size() != 2 || p.size() != 4 || kernel.size() != 2)
    return Status::error("its strides, dilations or pads do not name 2 spatial dims");
  std::string autoPad = n.attrs.getString("auto_pad", "NOTSET");
  if (pool && n.attrs.getInt("ceil_mode", 0) != 0)
    return Status::error("ceil_mode=1 has no blocked form");
  if (autoPad == "VALID") p = {0, 0, 0, 0};
  if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    if (pool) return Status::error("auto_pad " + autoPad + " on a pool has no blocked form");
    for (int i = 0; i < 2; ++i) {
      int64_t dk = (kernel[i] - 1) * d[i] + 1, o = ceilDiv(in[i], s[i]);
      int64_t total = std::max<int64_t>(0, (o - 1) * s[i] + dk - in[i]);
      p[i] = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      p[i + 2] = total - p[i];
    }
  }
  for (int i = 0; i < 2; ++i) {
    int64_t dk = (kernel[i] - 1) * d[i] + 1;
    if (s[i] <= 0 || in[i] + p[i] + p[i + 2] < dk ||
        (in[i] + p[i] + p[i + 2] - dk) / s[i] + 1 != out[i])
      return Status::error("its window geometry does not match its output shape");
  }
  return p;
}

// ---- 1. classify ----

struct Candidate {
  Role role;
  std::vector<int64_t> pads;  // Conv and pools: explicit pads
};

class Classifier {
 public:
  Classifier(const Graph& g, int block) : g_(g), b_(block) {}

  // The node's role when it can run blocked; `why` says why a Conv cannot.
  std::optional<Candidate> classify(const Node& n, std::string& why) const {
    auto y = n.outputs.size() == 1 ? plain4d(g_, n.outputs[0]) : std::nullopt;
    if (!y) {
      if (isOp(n, "Conv")) why = "only 2-D convs of f32 with static shapes are blocked";
      return std::nullopt;
    }
    if (isOp(n, "Conv")) return conv(n, *y, why);
    if (isOp(n, "MaxPool") || isOp(n, "AveragePool")) return pool(n, *y);
    if (isOp(n, "Concat")) return concat(n, *y);
    if (isOp(n, "GlobalAveragePool") || isOp(n, "GlobalMaxPool")) {
      if (n.inputs.size() == 1 && plain4d(g_, n.inputs[0])) return Candidate{Role::GlobalPool, {}};
      return std::nullopt;
    }
    const OpInfo* info = OpRegistry::instance().find(n.domain, n.op);
    if (!info || !info->eager || info->kind != PatternKind::ElemWise) return std::nullopt;
    bool full = false;
    for (ValueId v : n.inputs) {
      Operand k = operandKind(g_, v, *y);
      if (k == Operand::Bad) return std::nullopt;
      full = full || k == Operand::Full;
    }
    if (!full) return std::nullopt;
    return Candidate{Role::Elementwise, {}};
  }

 private:
  std::optional<Candidate> conv(const Node& n, const std::vector<int64_t>& y,
                                std::string& why) const {
    auto x = n.inputs.empty() ? std::nullopt : plain4d(g_, n.inputs[0]);
    if (!x) return why = "its input is not a 4-D f32 tensor of static shape in NCHW", std::nullopt;
    const TensorData* w = n.inputs.size() > 1 ? constantOf(g_, n.inputs[1]) : nullptr;
    if (!w || w->dtype != DType::F32 || w->rank() != 4)
      return why = "its weights are not a 4-D f32 constant", std::nullopt;
    const TensorData* b =
        n.inputs.size() > 2 && n.inputs[2].valid() ? constantOf(g_, n.inputs[2]) : nullptr;
    if (n.inputs.size() > 2 && n.inputs[2].valid() && (!b || b->dtype != DType::F32))
      return why = "its bias is not an f32 constant", std::nullopt;
    int64_t group = n.attrs.getInt("group", 1), C = (*x)[1], M = w->shape[0];
    bool depthwise = group > 1 && group == C && M == C && w->shape[1] == 1;
    if (group != 1 && !depthwise)
      return why = "group " + std::to_string(group) +
                   " is neither 1 nor depthwise (one output per channel)",
             std::nullopt;
    if (group == 1 && w->shape[1] != C)
      return why = "its weights do not match its input", std::nullopt;
    auto pads =
        explicitPads(n, {(*x)[2], (*x)[3]}, {w->shape[2], w->shape[3]}, {y[2], y[3]}, false);
    if (!pads) return why = pads.status().diagnostic().message, std::nullopt;
    return Candidate{Role::Conv, *pads};
  }

  // Concat over channels: blocked inputs concatenate block by block when every
  // input but the last fills its blocks (C % b == 0); the last one's padding
  // lanes are the output's.
  std::optional<Candidate> concat(const Node& n, const std::vector<int64_t>& y) const {
    int64_t axis = n.attrs.getInt("axis", 0);
    if ((axis != 1 && axis != -3) || n.inputs.empty()) return std::nullopt;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      auto x = plain4d(g_, n.inputs[i]);
      if (!x || (*x)[0] != y[0] || (*x)[2] != y[2] || (*x)[3] != y[3]) return std::nullopt;
      if (i + 1 < n.inputs.size() && (*x)[1] % b_ != 0) return std::nullopt;
    }
    return Candidate{Role::Concat, {}};
  }

  std::optional<Candidate> pool(const Node& n, const std::vector<int64_t>& y) const {
    auto x = n.inputs.size() == 1 ? plain4d(g_, n.inputs[0]) : std::nullopt;
    auto k = n.attrs.getInts("kernel_shape");
    if (!x || !k || k->size() != 2) return std::nullopt;
    auto pads = explicitPads(n, {(*x)[2], (*x)[3]}, *k, {y[2], y[3]}, true);
    if (!pads) return std::nullopt;
    return Candidate{Role::Pool, *pads};
  }

  const Graph& g_;
  int b_;
};

// ---- 2. plan: regions ----

struct Region {
  std::vector<NodeId> nodes;  // topological order
  bool hasConv = false;
};

class UnionFind {
 public:
  int32_t find(int32_t a) {
    if (!parent_.count(a)) parent_[a] = a;
    while (parent_[a] != a) a = parent_[a] = parent_[parent_[a]];
    return a;
  }
  void unite(int32_t a, int32_t b) { parent_[find(a)] = find(b); }

 private:
  std::map<int32_t, int32_t> parent_;
};

// The elementwise ops at a region's end that read a full operand from outside
// it (a residual Add of the block's input) stay NCHW, with the rest of the tail
// after them: transposing the region's result back first reads the outside
// operand as it is, where blocking the op transposes that operand in as well,
// two strided reads per element instead of one (gathers in the fused nest).
// Returns the nodes dropped from the region, in order, each with why.
std::vector<std::pair<NodeId, std::string>> trimTail(const Graph& g, Region& reg,
                                                     const std::map<int32_t, Candidate>& cand) {
  std::set<int32_t> members, tail, dropped;
  for (NodeId id : reg.nodes) members.insert(id.index);
  // Backwards: elementwise members that only tail members (or non-members) read.
  for (auto it = reg.nodes.rbegin(); it != reg.nodes.rend(); ++it) {
    if (cand.at(it->index).role != Role::Elementwise) continue;
    bool leaves = true;
    for (NodeId u : g.value(g.node(*it).outputs[0]).users)
      leaves = leaves && (!members.count(u.index) || tail.count(u.index));
    if (leaves) tail.insert(it->index);
  }
  std::vector<std::pair<NodeId, std::string>> out;
  for (NodeId id : reg.nodes) {
    if (!tail.count(id.index)) continue;
    const Node& n = g.node(id);
    const std::vector<int64_t> y = *plain4d(g, n.outputs[0]);
    for (ValueId v : n.inputs) {
      if (!v.valid() || g.value(v).constant || operandKind(g, v, y) != Operand::Full) continue;
      NodeId p = g.value(v).producer;
      if (p.valid() && members.count(p.index) && !dropped.count(p.index)) continue;
      dropped.insert(id.index);
      out.emplace_back(
          id, p.valid() && dropped.count(p.index)
                  ? "it reads '" + g.value(v).name + "', which stays NCHW at the region's end"
                  : "it ends the blocked region and reads '" + g.value(v).name +
                        "' from outside it: the region's result is transposed back before it "
                        "(one strided read per element, not two)");
      break;
    }
  }
  std::erase_if(reg.nodes, [&](NodeId id) { return dropped.count(id.index) > 0; });
  return out;
}

// ---- 3./4. rewrite and cancel ----

class LayoutRewriter {
 public:
  LayoutRewriter(Graph& g, int block) : g_(g), b_(block) {}

  void rewrite(NodeId id, const Candidate& c) {
    const Node old = g_.node(id);  // a copy: adding nodes moves the arena
    const Value out = g_.value(old.outputs[0]);
    std::vector<int64_t> y = *out.type.staticShape();
    std::vector<ValueId> ins;
    Attributes attrs = old.attrs;
    std::string op = old.op, domain = old.domain;
    if (c.role == Role::Conv) {
      op = "ConvNCHWc", domain = kFuseLensDomain;
      ins = {toBlocked(old.inputs[0]), blockWeights(old.inputs[1])};
      if (old.inputs.size() > 2 && old.inputs[2].valid()) ins.push_back(blockBias(old.inputs[2]));
      attrs.erase("kernel_shape");
      attrs.erase("auto_pad");
      setPads(attrs, c.pads);
    } else if (c.role == Role::Pool) {
      op = old.op + "NCHWc", domain = kFuseLensDomain;
      ins = {toBlocked(old.inputs[0])};
      attrs.erase("auto_pad");
      attrs.erase("ceil_mode");
      attrs.erase("storage_order");
      setPads(attrs, c.pads);
    } else if (c.role == Role::Concat) {
      for (ValueId v : old.inputs) ins.push_back(toBlocked(v));
      attrs.set("axis", int64_t(1));
    } else if (c.role == Role::GlobalPool) {
      // Per-channel means over H and W: a reduction the blocked tensor already is.
      op = isOp(old, "GlobalAveragePool") ? "ReduceMean" : "ReduceMax";
      attrs = {};
      auto axes =
          std::make_shared<TensorData>(TensorData::fromVector<int64_t>(DType::I64, {2}, {2, 3}));
      ins = {toBlocked(old.inputs[0]), g_.addConstant(freshName(g_, "hw_axes"), axes)};
    } else {
      for (ValueId v : old.inputs) {
        Operand k = operandKind(g_, v, y);
        ins.push_back(k == Operand::Full         ? toBlocked(v)
                      : k == Operand::PerChannel ? blockPerChannel(v)
                                                 : v);
      }
    }
    NodeId nn = g_.addNode(op, ins, {{freshName(g_, out.name + suffix()), blockedType(out.type)}},
                           attrs, old.name);
    g_.mutableNode(nn).domain = domain;
    g_.mutableNode(nn).origins = old.origins;
    ValueId blocked = g_.node(nn).outputs[0];
    setLayout(blocked, out.origin, y[1]);
    // The plain twin every current user reads, until the pairs cancel.
    Attributes fa;
    fa.set("block", int64_t(b_));
    fa.set("channels", y[1]);
    NodeId from =
        g_.addNode("FromNCHWc", {blocked}, {{freshName(g_, out.name + "_plain"), out.type}}, fa);
    g_.mutableNode(from).domain = kFuseLensDomain;
    ValueId plain = g_.node(from).outputs[0];
    g_.mutableValue(plain).origin = out.origin;
    ++inserted_;
    g_.replaceAllUses(out.id, plain);
    g_.removeNode(id);
    replaced_[id.index] = nn;
    g_.mutableValue(plain).name = out.name;
    twins_.push_back({blocked, plain, out.name});
    for (ValueId v : old.inputs)
      if (v.valid() && g_.hasValue(v) && g_.value(v).constant && g_.value(v).users.empty() &&
          !g_.isGraphOutput(v))
        g_.removeValue(v);
  }

  // From -> To pairs of one block and channel count: the To's users read the
  // From's input. Returns the number of transforms removed.
  int64_t cancelPairs() {
    int64_t removed = 0;
    const std::vector<NodeId> order = g_.topoOrder().value();  // a named copy, not a temporary
    for (NodeId id : order) {
      if (!g_.hasNode(id) || !isOp(g_.node(id), "ToNCHWc", kFuseLensDomain)) continue;
      const Node& to = g_.node(id);
      ValueId mid = to.inputs[0], toOut = to.outputs[0];
      NodeId p = g_.value(mid).producer;
      if (!p.valid() || !isOp(g_.node(p), "FromNCHWc", kFuseLensDomain) || g_.isGraphOutput(toOut))
        continue;
      const Node& from = g_.node(p);
      // Same block, and the blocked value really holds the From's channels
      // (else the To's zero padding would carry meaning the value lacks).
      int64_t block = from.attrs.getInt("block", 0);
      if (block != to.attrs.getInt("block", -1) ||
          g_.value(from.inputs[0]).layout !=
              Layout::blockedNCHW(int32_t(block), from.attrs.getInt("channels", 0)))
        continue;
      g_.replaceAllUses(toOut, from.inputs[0]);
      g_.removeNode(id);
      ++removed;
      if (g_.value(mid).users.empty() && !g_.isGraphOutput(mid)) {
        g_.removeNode(p);
        ++removed;
      }
    }
    return removed;
  }

  // A blocked value whose plain twin is gone takes the plain name.
  void settleNames() {
    for (const Twin& t : twins_)
      if (g_.hasValue(t.blocked) && !g_.hasValue(t.plain) && !g_.findValue(t.base))
        g_.mutableValue(t.blocked).name = t.base;
  }

  int64_t inserted() const { return inserted_; }
  const std::map<int32_t, NodeId>& replaced() const { return replaced_; }

 private:
  struct Twin {
    ValueId blocked, plain;
    std::string base;
  };

  // Explicit pads, left out when all are 0 (the default).
  static void setPads(Attributes& a, const std::vector<int64_t>& pads) {
    a.erase("pads");
    if (std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p != 0; }))
      a.set("pads", pads);
  }

  std::string suffix() const { return "_nchw" + std::to_string(b_) + "c"; }

  TensorType blockedType(const TensorType& t) const {
    TensorType o = t;
    o.shape = {t.shape[0], Dim::fixed(ceilDiv(t.shape[1].value, b_)), t.shape[2], t.shape[3],
               Dim::fixed(b_)};
    return o;
  }

  void setLayout(ValueId v, ValueId origin, int64_t channels) {
    g_.mutableValue(v).origin = origin;
    g_.mutableValue(v).layout = Layout::blockedNCHW(b_, channels);
  }

  ValueId toBlocked(ValueId v) {
    if (auto it = memo_.find(v.index); it != memo_.end()) return it->second;
    const Value val = g_.value(v);
    Attributes a;
    a.set("block", int64_t(b_));
    NodeId n = g_.addNode("ToNCHWc", {v},
                          {{freshName(g_, val.name + suffix()), blockedType(val.type)}}, a);
    g_.mutableNode(n).domain = kFuseLensDomain;
    ValueId out = g_.node(n).outputs[0];
    setLayout(out, val.origin, val.type.shape[1].value);
    ++inserted_;
    return memo_[v.index] = out;
  }

  // OIHW -> [Ob, I, KH, KW, b]: output channels blocked (padded with 0), input
  // channels not, so the conv never reads the padding lanes of its input.
  ValueId blockWeights(ValueId v) {
    const TensorData& w = *g_.value(v).constant;
    int64_t M = w.shape[0], I = w.shape[1], K = w.shape[2] * w.shape[3], OB = ceilDiv(M, b_);
    auto out = std::make_shared<TensorData>(
        DType::F32, std::vector<int64_t>{OB, I, w.shape[2], w.shape[3], b_});
    for (int64_t m = 0; m < M; ++m)
      for (int64_t i = 0; i < I; ++i)
        for (int64_t k = 0; k < K; ++k)
          out->data<float>()[(((m / b_) * I + i) * K + k) * b_ + m % b_] =
              w.data<float>()[(m * I + i) * K + k];
    return g_.addConstant(freshName(g_, g_.value(v).name + "_oihw" + std::to_string(b_) + "o"),
                          out);
  }

  // [M] -> [Ob, b] and [C,1,1] / [1,C,1,1] -> [Cb,1,1,b], padded with 0.
  ValueId blockChannels(ValueId v, std::vector<int64_t> shapeOf) {
    const TensorData& c = *g_.value(v).constant;
    auto out = std::make_shared<TensorData>(DType::F32, std::move(shapeOf));
    std::copy(c.data<float>(), c.data<float>() + c.numel(), out->data<float>());
    return g_.addConstant(freshName(g_, g_.value(v).name + suffix()), out);
  }
  ValueId blockBias(ValueId v) {
    return blockChannels(v, {ceilDiv(g_.value(v).constant->numel(), b_), b_});
  }
  ValueId blockPerChannel(ValueId v) {
    return blockChannels(v, {ceilDiv(g_.value(v).constant->numel(), b_), 1, 1, b_});
  }

  Graph& g_;
  int b_;
  std::map<int32_t, ValueId> memo_;  // plain value -> its ToNCHWc
  std::vector<Twin> twins_;
  std::map<int32_t, NodeId> replaced_;  // old node index -> its blocked form
  int64_t inserted_ = 0;
};

}  // namespace

PassResult LayoutPass::run(Graph& input, PassContext& ctx) {
  // 0. open the fused groups that hold a Conv or pool (layout after fuse-ops),
  // on a copy, so a graph the pass leaves alone stays exactly as it was.
  Graph work = input;
  const std::vector<OpenedGroup> opened = openLayoutGroups(work);
  Graph& g = opened.empty() ? input : work;
  auto order = g.topoOrder();
  if (!order) return PassResult::failed(Status::error("the graph has a cycle", "layout"));
  PassResult r;
  const int block = block_ ? block_ : layoutBlockFor(ctx.vectorLanes);
  // 1. classify
  Classifier cls(g, block);
  std::map<int32_t, Candidate> cand;
  for (NodeId id : *order) {
    std::string why;
    if (auto c = cls.classify(g.node(id), why))
      cand.emplace(id.index, *c);
    else if (!why.empty())
      r.diagnostics.push_back({Severity::Note, describeNode(g.node(id)), "stays NCHW: " + why});
  }
  // 2. plan: regions joined through full operands
  UnionFind uf;
  for (const auto& [idx, c] : cand) {
    uf.find(idx);
    for (ValueId v : g.node(NodeId(idx)).inputs) {
      if (!v.valid() || !g.value(v).producer.valid()) continue;
      int32_t p = g.value(v).producer.index;
      if (cand.count(p) && plain4d(g, v)) uf.unite(p, idx);
    }
  }
  std::map<int32_t, Region> regions;
  for (NodeId id : *order)
    if (cand.count(id.index)) {
      Region& reg = regions[uf.find(id.index)];
      reg.nodes.push_back(id);
      reg.hasConv = reg.hasConv || cand.at(id.index).role == Role::Conv;
    }
  // 3. rewrite
  LayoutRewriter rw(g, block);
  int64_t rewritten = 0, ops = 0;
  for (auto& [root, reg] : regions) {
    if (ctx.cancel.cancelled()) return PassResult::failed(Status::error("cancelled", "layout"));
    if (!reg.hasConv) continue;
    for (const auto& [id, why] : trimTail(g, reg, cand))
      r.diagnostics.push_back({Severity::Note, describeNode(g.node(id)), "stays NCHW: " + why});
    std::string first = describeNode(g.node(reg.nodes.front())), members;
    for (NodeId id : reg.nodes) members += (members.empty() ? "" : ", ") + g.node(id).op;
    for (NodeId id : reg.nodes) rw.rewrite(id, cand.at(id.index));
    ++rewritten, ops += int64_t(reg.nodes.size());
    r.diagnostics.push_back({Severity::Note, first,
                             "region rewritten to NCHW" + std::to_string(block) + "c: " + members});
  }
  // 4. cancel
  int64_t cancelled = rw.cancelPairs();
  rw.settleNames();
  if (rewritten == 0 && cancelled == 0) {  // opened groups, if any, were opened on the copy
    PassResult u = PassResult::unchanged();
    u.diagnostics = std::move(r.diagnostics);
    return u;
  }
  // 5. close the opened groups over their members' blocked forms
  const std::vector<NodeId> closed = closeLayoutGroups(g, opened, rw.replaced());
  if (!opened.empty()) input = std::move(work);
  r.changed = true;
  if (!closed.empty())
    r.diagnostics.push_back(
        {Severity::Note, "pass layout",
         std::to_string(closed.size()) + " fused groups rewritten inside (layout after fuse-ops)"});
  // 6. after the fusion passes, when no fuse-ops follows to do it: the
  // boundary transforms join the blocked groups beside them, as fuse-ops
  // would have folded them.
  bool fusedBefore = false, fuseOpsAfter = false;
  for (size_t i = 0; i < ctx.pipeline.size(); ++i) {
    const bool fusion = ctx.pipeline[i] == "fuse-ops" || ctx.pipeline[i] == "fuse-patterns";
    if (i < ctx.position) fusedBefore |= fusion;
    if (i > ctx.position) fuseOpsAfter |= ctx.pipeline[i] == "fuse-ops";
  }
  if (fusedBefore && !fuseOpsAfter) {
    std::vector<FusionDecision> folds = foldBoundaryTransforms(input);
    r.stats["transforms folded"] = int64_t(folds.size());
    if (!folds.empty())
      r.diagnostics.push_back({Severity::Note, "pass layout",
                               std::to_string(folds.size()) +
                                   " boundary transforms folded into the groups beside "
                                   "them (layout-prologue, layout-epilogue)"});
    ctx.decisions.insert(ctx.decisions.end(), folds.begin(), folds.end());
  }
  r.diagnostics.push_back({Severity::Note, "pass layout",
                           std::to_string(rw.inserted()) + " transforms inserted, " +
                               std::to_string(cancelled) + " cancelled in From -> To pairs"});
  r.stats["block"] = block;
  r.stats["regions rewritten"] = rewritten;
  r.stats["ops blocked"] = ops;
  r.stats["transforms inserted"] = rw.inserted();
  r.stats["transforms cancelled"] = cancelled;
  r.stats["groups rewritten"] = int64_t(closed.size());
  int64_t left = 0;
  for (NodeId id : input.nodeIds())
    left += isOp(input.node(id), "ToNCHWc", kFuseLensDomain) ||
            isOp(input.node(id), "FromNCHWc", kFuseLensDomain);
  r.stats["transforms left"] = left;
  return r;
}

}  // namespace fuselens
