#include "passes/fusion_checks.h"

#include <algorithm>

#include "passes/pattern_match.h"

namespace fuselens {
namespace {

// Every reduction in a group, with the graph it lives in (a pattern group's
// members live in its body).
void reductions(const Graph& g, const Node& n,
                std::vector<std::pair<const Graph*, const Node*>>& out) {
  if (isPatternGroup(n)) {
    for (NodeId b : n.body->nodeIds()) reductions(*n.body, n.body->node(b), out);
    return;
  }
  if (patternKindOf(g, n.id) == PatternKind::CommReduce) out.push_back({&g, &n});
}

std::string joinOps(const std::vector<std::pair<const Graph*, const Node*>>& rs) {
  std::string s;
  for (auto& [g, n] : rs) s += (s.empty() ? "" : ", ") + nodeLabel(*n);
  return s;
}

}  // namespace

PatternKind groupNodeKind(const Node& fused) {
  PatternKind k = PatternKind::ElemWise;
  for (NodeId b : fused.body->nodeIds()) k = mergeKinds(k, patternKindOf(*fused.body, b));
  return k;
}

int64_t groupNodeSize(const Node& n) {
  return isPatternGroup(n) ? int64_t(n.body->nodeCount()) : 1;
}

RuleVerdict reduceChain(const Graph& g, const std::vector<NodeId>& producerGroup,
                        const std::vector<NodeId>& consumerGroup, const std::string& producer,
                        const std::string& consumer, bool multiAnchor) {
  std::vector<std::pair<const Graph*, const Node*>> rs;
  for (NodeId n : producerGroup) reductions(g, g.node(n), rs);
  for (NodeId n : consumerGroup) reductions(g, g.node(n), rs);
  std::optional<ReducedRows> first;
  bool same = !rs.empty();
  std::string rowsText;
  for (auto& [graph, n] : rs) {
    auto r = reducedRows(*graph, *n);
    if (!r) {
      same = false;
      rowsText +=
          (rowsText.empty() ? "" : "; ") + nodeLabel(*n) + " over rows not known statically";
      continue;
    }
    if (!first)
      first = r;
    else
      same = same && *r == *first;
    rowsText += (rowsText.empty() ? "" : "; ") + nodeLabel(*n) + ": " + r->str();
  }
  const std::string both = "the group of " + producer + " and the group of " + consumer;
  if (!same || !first)
    return {
        false,
        FusionRule::TwoAnchors,
        both + " are both CommReduce and reduce different rows (" + rowsText +
            "); a group holds at most one reduction unless all its reductions reduce the same rows",
        {}};
  const std::string facts =
      both + " hold reductions over the same rows (" + joinOps(rs) + ": " + first->str() + ")";
  if (multiAnchor)
    return {true,
            FusionRule::ReduceChain,
            facts + "; one kernel runs them as consecutive stages over each row (multi-anchor)",
            {}};
  return {false, FusionRule::ReduceChain,
          facts +
              ", which one kernel could run as consecutive stages, but multi-anchor groups are off "
              "(multi-anchor=0)",
          "form it with fuse-ops{multi-anchor=1} (the default)"};
}

std::optional<RuleVerdict> dynamicDim(const Graph& g, ValueId edge, const Node& cn,
                                      const std::string& producer, const std::string& consumer) {
  if (cn.outputs.empty()) return {};
  const TensorType& a = g.value(edge).type;
  const TensorType& b = g.value(cn.outputs[0]).type;
  if (!a.rankKnown || !b.rankKnown) return {};
  for (size_t i = 1; i <= std::min(a.rank(), b.rank()); ++i) {
    const Dim& x = a.shape[a.rank() - i];
    const Dim& y = b.shape[b.rank() - i];
    const bool xs = !x.symbol.empty(), ys = !y.symbol.empty();
    if ((!xs && !ys) || (xs && ys && x.symbol == y.symbol)) continue;
    if ((xs && y.isStatic() && y.value == 1) || (ys && x.isStatic() && x.value == 1))
      continue;  // broadcast
    if ((xs && !ys && !y.isStatic()) || (ys && !xs && !x.isStatic()))
      continue;  // unknown: nothing to say
    const std::string dim = xs ? x.symbol : y.symbol;
    const std::string other = xs ? y.str() : x.str();
    return RuleVerdict{false, FusionRule::DynamicDim,
                       "dynamic dim `" + dim + "` differs between the two: " + producer +
                           " gives " + a.str() + ", " + consumer + " computes " + b.str() + " (`" +
                           dim + "` against " + other +
                           "); one loop nest cannot be shaped for both before run time",
                       "bind the dim (--dim " + dim +
                           "=N) so both shapes are static, or give both sides one symbol"};
  }
  return {};
}

bool touchesNchwConv(const Graph& g, const Node& n) {
  if (isPatternGroup(n)) {
    for (NodeId b : n.body->nodeIds())
      if (touchesNchwConv(*n.body, n.body->node(b))) return true;
    return false;
  }
  static const char* const ops[] = {"Conv",        "ConvTranspose",     "MaxPool",
                                    "AveragePool", "GlobalAveragePool", "GlobalMaxPool"};
  if (!n.domain.empty() || n.inputs.empty() || !n.inputs[0].valid()) return false;
  if (std::none_of(std::begin(ops), std::end(ops), [&](const char* op) { return n.op == op; }))
    return false;
  const Value& x = g.value(n.inputs[0]);
  return x.type.rankKnown && x.type.rank() == 4 && !x.layout.blocked();
}

std::string layoutHint(FusionRule rule) {
  if (rule != FusionRule::InjectiveAfterAnchor && rule != FusionRule::PrologueIntoAnchor) return {};
  return "run layout first (layout before fuse-ops): in NCHWc the Conv region's layout "
         "changes move to "
         "its boundaries, where transforms that cancel are removed";
}

std::optional<RuleVerdict> layoutTransformFold(const Node& pn, const Node& cn, ValueId edge,
                                               bool producerAlone, PatternKind producerGroup,
                                               PatternKind consumerGroup,
                                               const std::string& producer,
                                               const std::string& consumer) {
  auto layoutOp = [](const Node& n, const char* op) {
    return n.domain == kFuseLensDomain && n.op == op && !n.body;
  };
  const bool blockedWindow =
      layoutOp(cn, "ConvNCHWc") || layoutOp(cn, "MaxPoolNCHWc") || layoutOp(cn, "AveragePoolNCHWc");
  if (layoutOp(pn, "ToNCHWc") && producerAlone && blockedWindow && !cn.inputs.empty() &&
      cn.inputs[0] == edge && producerGroup <= PatternKind::Injective &&
      consumerGroup == PatternKind::OutEWiseFusable)
    return RuleVerdict{
        true,
        FusionRule::LayoutPrologue,
        producer + " is a layout transform (an Injective index map) and " + consumer +
            " reads its input through it, so the kernel blocks its input as it loads it",
        {}};
  const bool anchorGroup =
      producerGroup == PatternKind::OutEWiseFusable || producerGroup == PatternKind::CommReduce;
  if (layoutOp(cn, "FromNCHWc") && anchorGroup)
    return RuleVerdict{
        true,
        FusionRule::LayoutEpilogue,
        consumer + " is a layout transform (an Injective index map) of the blocked result of the " +
            std::string(patternKindName(producerGroup)) + " group of " + producer +
            "; the kernel unblocks it as a last stage",
        {}};
  return std::nullopt;
}

std::string twoAnchorsHint(const Graph& g, const Node& pn, const Node& cn) {
  auto isOp = [](const Node& n, const char* op) {
    if (isPatternGroup(n)) return false;
    return n.domain.empty() && n.op == op;
  };
  (void)g;
  bool scores = (isOp(cn, "Softmax") &&
                 (isOp(pn, "MatMul") || pn.op == "Add" || pn.op == "Div" || pn.op == "Mul")) ||
                (isOp(pn, "Softmax") && isOp(cn, "MatMul"));
  if (scores)
    return "run fuse-patterns before fuse-ops with multi-anchor=1 (its default): it forms scaled "
           "dot-product "
           "attention (MatMul, scale, mask, Softmax, MatMul) as one group, pattern-attention";
  return {};
}

}  // namespace fuselens
