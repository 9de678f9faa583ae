// Plans, for one kernel body, where each reduction result (MatMul, Gemm,
// Softmax) lives:
//
//   %mm = MatMul(%x, %w)        the kernel output %y reads %mm only elementwise
//   %a  = Add(%mm, %b)          and at the same flat position, and nothing else
//   %y  = Relu(%a)     <- out   reads %mm: %mm is %y's accumulator, no buffer
//
// Every other reduction result is materialized (a temp, or its own output
// buffer) and read back by loads. The walk follows inlinable producers from
// each root (a reduction's operands, or a kernel output) down to reduction
// results; the "identity" flag stays true only through same-shape elementwise
// operands, inference BatchNormalization's x, Identity and Reshape (which
// keeps the flat index).
#include <set>
#include <tuple>

#include "codegen/lower/compute_scatter.h"
#include "codegen/lower/lower_internal.h"

namespace fuselens {
namespace {

class ReadWalk {
 public:
  explicit ReadWalk(const Graph& g) : g_(g) {}

  bool isReduction(ValueId v) const {
    NodeId p = g_.value(v).producer;
    return p.valid() && computeClassOf(g_.node(p)) == ComputeClass::Reduction;
  }

  // Records that root `root` reads the reduction results reachable from v.
  void walk(int64_t root, ValueId v, bool identity) {
    if (!v.valid() || !seen_.insert({root, v.index, identity}).second) return;
    if (isReduction(v)) {
      readers[v.index].insert(root);
      if (!identity) nonIdentity.insert(v.index);
      return;
    }
    NodeId p = g_.value(v).producer;
    if (!p.valid()) return;
    const Node& n = g_.node(p);
    auto shape = g_.value(v).type.staticShape();
    if (computeClassOf(n) == ComputeClass::Elementwise) {
      for (ValueId in : n.inputs)
        if (in.valid()) walk(root, in, identity && g_.value(in).type.staticShape() == shape);
    } else if (computeClassOf(n) == ComputeClass::Injective) {
      // Inference BatchNormalization reads x where it writes (a per-channel
      // affine map), so a Conv/ConvTranspose + BN + Relu group keeps the
      // product's accumulator instead of a temp; other injective ops shift.
      bool affine = n.op == "BatchNormalization";
      for (size_t k = 0; k < n.inputs.size(); ++k)
        walk(root, n.inputs[k],
             affine && k == 0 && identity && g_.value(n.inputs[k]).type.staticShape() == shape);
    } else {
      walk(root, n.inputs[0], identity && n.op != "Transpose" && n.op != "Slice");
    }
  }

  std::map<int32_t, std::set<int64_t>> readers;  // reduction value -> roots reading it
  std::set<int32_t> nonIdentity;                 // read somewhere at another position

 private:
  const Graph& g_;
  std::set<std::tuple<int64_t, int32_t, bool>> seen_;
};

}  // namespace

FusionPlan planFusion(const Graph& body, const std::vector<NodeId>& order,
                      const std::vector<ValueId>& groupOutputs) {
  ReadWalk w(body);
  std::map<int32_t, size_t> position;  // node -> topological position
  for (size_t i = 0; i < order.size(); ++i) position[order[i].index] = i;
  // Roots: reduction node n is 2n, kernel output v is 2v+1.
  for (NodeId id : order) {
    const Node& n = body.node(id);
    if (computeClassOf(n) != ComputeClass::Reduction) continue;
    for (ValueId in : n.inputs) w.walk(2 * int64_t(id.index), in, false);
  }
  std::set<int32_t> outputs;
  for (ValueId o : groupOutputs) outputs.insert(o.index);
  for (int32_t o : outputs)
    if (!w.isReduction(ValueId(o))) w.walk(2 * int64_t(o) + 1, ValueId(o), true);

  FusionPlan plan;
  std::set<int32_t> fused;
  for (int32_t o : outputs) {
    if (w.isReduction(ValueId(o))) continue;
    std::optional<ValueId> best;
    for (auto& [v, roots] : w.readers) {
      bool only = roots.size() == 1 && *roots.begin() == 2 * int64_t(o) + 1;
      if (!only || w.nonIdentity.count(v) || outputs.count(v) || fused.count(v)) continue;
      const Node& p = body.node(body.value(ValueId(v)).producer);
      // A multi-output node's nest writes every output; a scatter reads its result back.
      if (p.outputs.size() > 1 || isScatterOp(p.op)) continue;
      // Several candidates: the latest one, so earlier results are ready when its nest runs.
      if (!best || position[body.value(ValueId(v)).producer.index] >
                       position[body.value(*best).producer.index])
        best = ValueId(v);
    }
    if (best) {
      plan.epilogueOf[o] = *best;
      fused.insert(best->index);
    }
  }
  for (NodeId id : order) {
    const Node& n = body.node(id);
    if (computeClassOf(n) != ComputeClass::Reduction) continue;
    ValueId v = n.outputs[0];
    bool used = false;  // any output: the node's nest writes them all
    for (ValueId o : n.outputs) used = used || w.readers.count(o.index) || outputs.count(o.index);
    if (used && !fused.count(v.index)) plan.materialized.push_back(v);
  }
  return plan;
}

namespace {

std::optional<ValueId> accumulatorRead(const Graph& body, const std::set<int32_t>& fused, ValueId v,
                                       std::set<int32_t>& seen) {
  if (!v.valid() || !seen.insert(v.index).second) return std::nullopt;
  if (fused.count(v.index)) return v;
  NodeId p = body.value(v).producer;
  if (!p.valid() || computeClassOf(body.node(p)) == ComputeClass::Reduction) return std::nullopt;
  for (ValueId in : body.node(p).inputs)
    if (auto acc = accumulatorRead(body, fused, in, seen)) return acc;
  return std::nullopt;
}

}  // namespace

std::optional<ValueId> fusedAccumulatorOf(const Graph& body, const FusionPlan& plan, ValueId v) {
  std::set<int32_t> fused, seen;
  for (const auto& [o, acc] : plan.epilogueOf) fused.insert(acc.index);
  return accumulatorRead(body, fused, v, seen);
}

}  // namespace fuselens
