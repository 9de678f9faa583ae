// cse in two sweeps: constants first (so nodes reading equal constants then
// have equal inputs), then nodes in topological order, each looked up in a table
// keyed by op, domain and input ids and compared on attributes:
//
//   %a = Exp(%x)                 %a = Exp(%x)
//   %b = Exp(%x)        ->       %c = Add(%a, %a)
//   %c = Add(%a, %b)
#include "passes/cse.h"

#include <cstring>
#include <map>
#include <set>
#include <string_view>

#include "core/ir/text_syntax.h"
#include "core/ops/registry.h"
#include "passes/rewriter.h"

namespace fuselens {
namespace {

bool mergeable(const Node& n) {
  static const std::set<std::string> random = {"RandomNormal",     "RandomUniform",
                                               "RandomNormalLike", "RandomUniformLike",
                                               "Multinomial",      "Bernoulli"};
  return !n.body && !n.outputs.empty() && !(n.domain.empty() && random.count(n.op));
}

std::string nodeKey(const Node& n) {
  std::string key = n.domain + "." + n.op + "(";
  for (ValueId in : n.inputs) key += std::to_string(in.index) + ",";
  return key + ")";
}

bool sameConstant(const TensorData& a, const TensorData& b) {
  return a.dtype == b.dtype && a.shape == b.shape && a.bytes == b.bytes;
}

bool anyGraphOutput(const Graph& g, const Node& n) {
  for (ValueId o : n.outputs)
    if (g.isGraphOutput(o)) return true;
  return false;
}

void mergeConstants(Graph& g, Rewriter& rw) {
  // type + a hash of the bytes -> first of each content. The hash keeps a
  // bucket to the equal constants (and rare collisions): keyed by size alone,
  // 20,000 same-shaped weights compared each with all before it.
  std::map<std::string, std::vector<ValueId>> seen;
  for (ValueId c : g.constants()) {
    const TensorData& t = *g.value(c).constant;
    const std::string_view raw(reinterpret_cast<const char*>(t.bytes.data()), t.bytes.size());
    auto& bucket = seen[t.type().str() + "/" + std::to_string(std::hash<std::string_view>{}(raw))];
    ValueId keep;
    for (ValueId k : bucket)
      if (sameConstant(*g.value(k).constant, t)) keep = k;
    if (!keep.valid() || g.isGraphOutput(c) || g.value(c).users.empty()) {
      bucket.push_back(c);
      continue;
    }
    NodeId firstUser = g.value(c).users.front();
    std::string sentence = "constant " + valueRef(g, c) + " equals " + valueRef(g, keep);
    rw.replaceValue(c, keep);
    rw.log("cse-constant", g.node(firstUser), sentence);
    rw.eraseIfDeadValue(c);
  }
}

void mergeNodes(Graph& g, Rewriter& rw, const std::vector<NodeId>& order) {
  std::map<std::string, std::vector<NodeId>> table;
  for (NodeId id : order) {
    const Node& n = g.node(id);
    if (!mergeable(n)) continue;
    auto& bucket = table[nodeKey(n)];
    NodeId keep;
    for (NodeId k : bucket)
      if (g.node(k).op == n.op && g.node(k).outputs.size() == n.outputs.size() &&
          g.node(k).attrs == n.attrs)
        keep = k;
    if (!keep.valid() || anyGraphOutput(g, n)) {
      bucket.push_back(id);
      continue;
    }
    const Node copy = n;
    std::string sentence = "computes the same as " + describeNode(g.node(keep));
    for (size_t i = 0; i < copy.outputs.size(); ++i)
      rw.replaceValue(copy.outputs[i], g.node(keep).outputs[i]);
    rw.log("cse-node", copy, sentence);
    rw.eraseIfDead(id);
  }
}

}  // namespace

PassResult CsePass::run(Graph& g, PassContext&) {
  Rewriter rw(g);
  mergeConstants(g, rw);
  auto order = g.topoOrder();
  if (!order) return PassResult::failed(Status::error("the graph has a cycle", "cse"));
  mergeNodes(g, rw, *order);
  PassResult r;
  rw.finish(r);
  return r;
}

}  // namespace fuselens
