// const-fold, one sweep in topological order (a folded node's users are seen
// after it, so whole constant chains fold in one run):
//
//   %s = Shape(%x: f32[2,6])        -> %s = Constant dense<[2, 6]>   (from the type)
//   %t = Gather(%s, %c1)            -> %t = Constant dense<[6]>      (eager kernel)
//   %u = Mul(%t, %two)              -> %u = Constant dense<[12]>
//
// Each fold is planned (evaluate, check size) before anything changes, then
// applied through the Rewriter, which logs it.
#include "passes/const_fold.h"

#include <set>

#include "core/eager/interpreter.h"
#include "core/ops/registry.h"
#include "passes/rewriter.h"

namespace fuselens {
namespace {

bool isNondeterministic(const Node& n) {
  static const std::set<std::string> ops = {"RandomNormal",     "RandomUniform",
                                            "RandomNormalLike", "RandomUniformLike",
                                            "Multinomial",      "Bernoulli"};
  return n.domain.empty() && ops.count(n.op);
}

bool allInputsConstant(const Graph& g, const Node& n) {
  bool any = false;
  for (ValueId in : n.inputs) {
    if (!in.valid()) continue;
    if (!g.value(in).constant) return false;
    any = true;
  }
  return any;
}

// Shape(x) when x's type is static: ONNX Shape with the optional start/end (opset 15).
std::optional<TensorData> shapeFromType(const Graph& g, const Node& n) {
  if (n.op != "Shape" || !n.domain.empty() || n.inputs.empty() || !n.inputs[0].valid()) return {};
  auto dims = g.value(n.inputs[0]).type.staticShape();
  if (!dims) return {};
  int64_t rank = int64_t(dims->size());
  auto clamp = [&](int64_t a) {
    return std::min(std::max(a < 0 ? a + rank : a, int64_t(0)), rank);
  };
  int64_t start = clamp(n.attrs.getInt("start", 0)), end = clamp(n.attrs.getInt("end", rank));
  std::vector<int64_t> out;
  for (int64_t i = start; i < end; ++i) out.push_back((*dims)[size_t(i)]);
  return TensorData::fromVector(DType::I64, {int64_t(out.size())}, out);
}

// A folded tensor may refine a type (a '?' becomes a number) but never change it.
bool compatible(const TensorType& declared, const TensorData& t) {
  if (declared.dtype != t.dtype) return false;
  if (!declared.rankKnown) return true;
  if (declared.rank() != t.rank()) return false;
  for (size_t i = 0; i < t.rank(); ++i)
    if (declared.shape[i].isStatic() && declared.shape[i].value != t.shape[i]) return false;
  return true;
}

struct Plan {
  std::vector<TensorData> outputs;
  std::string rule, sentence;
};

class Folder {
 public:
  Folder(Graph& g, int64_t maxElements) : g_(g), rw_(g), maxElements_(maxElements) {}

  PassResult run() {
    auto order = g_.topoOrder();
    if (!order) return PassResult::failed(Status::error("the graph has a cycle", "const-fold"));
    PassResult r;
    for (NodeId id : *order) {
      if (!g_.hasNode(id)) continue;
      // Folds upstream may have turned a shape operand into a constant (an
      // Expand or Reshape target computed from Shape): infer again, so this
      // node's outputs and the Shape nodes below see the now-static shapes.
      // A failure leaves the types as they were; the verifier judges them.
      (void)inferNodeTypes(g_, id);
      if (auto plan = planFold(g_.node(id), r)) apply(id, *plan);
    }
    rw_.finish(r);
    return r;
  }

 private:
  std::optional<Plan> planFold(const Node& n, PassResult& r) {
    if (n.body || isNondeterministic(n)) return {};
    if (auto shape = shapeFromType(g_, n))
      return Plan{{*shape},
                  "fold-shape",
                  "Shape of " + g_.value(n.inputs[0]).type.str() + " is known at compile time"};
    if (!allInputsConstant(g_, n)) return {};
    const OpInfo* info = OpRegistry::instance().find(n.domain, n.op);
    if (!info || !info->eager) return {};
    std::vector<const TensorData*> ins;
    for (ValueId in : n.inputs) ins.push_back(in.valid() ? g_.value(in).constant.get() : nullptr);
    auto outs = info->eager(n, ins, eagerKernelContext());  // If/Loop bodies run eagerly too
    if (!outs) return skip(r, n, "its kernel fails at compile time (" + outs.message() + ")");
    if (outs->size() < n.outputs.size()) return skip(r, n, "its kernel gave too few outputs");
    int64_t created = 0, freed = 0;
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      if (!compatible(g_.value(n.outputs[i]).type, (*outs)[i]))
        return skip(r, n,
                    "its kernel gave " + (*outs)[i].type().str() + " where the graph says " +
                        g_.value(n.outputs[i]).type.str());
      created += (*outs)[i].numel();
    }
    for (ValueId in : n.inputs)
      if (in.valid() && g_.value(in).users.size() == 1 && !g_.isGraphOutput(in))
        freed += g_.value(in).constant->numel();
    if (created > maxElements_ && created > freed) {
      ++r.stats["folds skipped (size cap)"];
      return skip(r, n,
                  "it would add a " + std::to_string(created) +
                      "-element constant while its inputs stay alive; the cap is max-elements=" +
                      std::to_string(maxElements_));
    }
    outs->resize(n.outputs.size());
    return Plan{
        std::move(*outs), "fold",
        "evaluated at compile time into " + std::to_string(created) + " constant element(s)"};
  }

  std::nullopt_t skip(PassResult& r, const Node& n, const std::string& why) {
    r.diagnostics.push_back(Diagnostic{Severity::Note, describeNode(n), "not folded: " + why});
    return std::nullopt;
  }

  void apply(NodeId id, Plan& plan) {
    const Node n = g_.node(id);  // a copy: the rewrite edits the arena
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      ValueId out = n.outputs[i];
      if (g_.value(out).users.empty() && !g_.isGraphOutput(out)) continue;
      auto data = std::make_shared<const TensorData>(std::move(plan.outputs[i]));
      rw_.replaceValue(out, rw_.addConstantFor(out, data));
    }
    rw_.log(plan.rule, n, plan.sentence);
    rw_.eraseIfDead(id);
  }

  Graph& g_;
  Rewriter rw_;
  int64_t maxElements_;
};

}  // namespace

PassResult ConstFoldPass::run(Graph& g, PassContext&) { return Folder(g, maxElements_).run(); }

}  // namespace fuselens
