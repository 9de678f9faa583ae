// See host_kernel.h. The node is copied into a small graph of its own (or its
// fused body is used), so the eager interpreter runs it exactly as it runs the
// reference, subgraphs of If / Loop / Scan included.
#include "codegen/runtime/host_kernel.h"

#include <memory>

#include "core/eager/interpreter.h"

namespace fuselens {
namespace {

struct HostNode {
  std::shared_ptr<const Graph> graph;  // the node alone, or the fused body
  std::vector<TensorType> inTypes;     // of the present inputs, in order
  std::vector<TensorType> outTypes;
  std::string where;
};

// The node alone, its present inputs as graph inputs in order.
std::shared_ptr<const Graph> nodeGraph(const Graph& g, const Node& n) {
  return std::make_shared<const Graph>(graphOfNode(g, n, [&](Graph& alone, size_t i) {
    return alone.addInput("in" + std::to_string(i), g.value(n.inputs[i]).type);
  }));
}

}  // namespace

HostKernelFn makeHostKernel(const Graph& g, const Node& n) {
  auto h = std::make_shared<HostNode>();
  bool fused = n.op == kFusedOp && n.domain == kFuseLensDomain && n.body;
  h->graph = fused ? n.body : nodeGraph(g, n);
  for (ValueId v : n.inputs)
    if (v.valid()) h->inTypes.push_back(g.value(v).type);
  for (ValueId v : n.outputs) h->outTypes.push_back(g.value(v).type);
  h->where = "node '" + n.name + "' (" + n.op + ", reference fallback)";
  return [h](const std::vector<const TensorData*>& in) -> Expected<std::vector<TensorData>> {
    const Graph& body = *h->graph;
    if (in.size() != h->inTypes.size() || in.size() != body.inputs().size())
      return Status::error("internal: " + std::to_string(in.size()) + " inputs for " +
                               std::to_string(body.inputs().size()),
                           h->where);
    // The body's inputs are the node's present inputs, in order (a fused group
    // omits none).
    std::map<std::string, TensorData> inputs;
    for (size_t a = 0; a < in.size(); ++a) {
      if (!in[a])
        return Status::error("internal: input " + std::to_string(a) + " is not computed", h->where);
      inputs[body.value(body.inputs()[a]).name] = *in[a];
    }
    EagerOptions opts;
    opts.keepIntermediates = false;
    auto r = runEager(body, inputs, opts);
    if (!r) return Status::error(r.diagnostic().message, h->where);
    std::vector<TensorData> outs;
    for (size_t k = 0; k < h->outTypes.size(); ++k) {
      const TensorData* t = r->find(body.outputs()[k]);
      const TensorType& want = h->outTypes[k];
      auto shape = want.staticShape();
      if (!t || t->dtype != want.dtype || (want.rankKnown && t->rank() != want.shape.size()) ||
          (shape && t->shape != *shape))
        return Status::error("output " + std::to_string(k) + " came out as " +
                                 (t ? t->type().str() : std::string("nothing")) +
                                 "; the compiled graph expects " + want.str(),
                             h->where);
      outs.push_back(*t);
    }
    return outs;
  };
}

}  // namespace fuselens
