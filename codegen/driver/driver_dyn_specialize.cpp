// Nodes that touch a value of run-time shape (downstream of NonZero, Range or a
// Loop output) as driver kernels: the node becomes a graph of its own (a fused
// group: its body), which codegen/driver/specialize.h compiles for the input types
// each run meets and caches by them.
//
//   run(inputs) -> types -> shapes all inferable from the types?
//        yes: SpecializedGraph(node graph).run
//        no, and small integer inputs exist (a Reshape's shape computed from a
//            Shape of a NonZero): those inputs become constants of a copy of
//            the node graph, one SpecializedGraph per value set (bounded LRU)
//        no, else: an error naming the value whose shape the types cannot give
//
// The answer per type set is remembered, so a hit costs a lookup. A graph is
// only handed to compileGraph once all its shapes are known (NonZero and Range
// outputs aside: the inner compile drives those), so specializing never
// recurses into itself.
#include <list>
#include <map>
#include <mutex>

#include "codegen/driver/driver_dyn_kernels.h"
#include "codegen/driver/specialize.h"
#include "codegen/lower/compute.h"

namespace fuselens {
namespace {

constexpr size_t kTypeSets = 16;    // remembered answers, and modules per graph
constexpr size_t kValueSets = 8;    // value-specialized graphs kept
constexpr int64_t kSmallInts = 64;  // at most this many elements are baked as constants

bool isOnnx(const Node& n) { return n.domain.empty() || n.domain == "ai.onnx"; }
bool drivesOwnShape(const Node& n) { return isOnnx(n) && (n.op == "NonZero" || n.op == "Range"); }

bool isStaticType(const TensorType& t) { return t.rankKnown && t.isStatic(); }

bool touchesDynamic(const Graph& g, const Node& n) {
  for (ValueId v : n.inputs)
    if (v.valid() && !isStaticType(g.value(v).type)) return true;
  for (ValueId v : n.outputs)
    if (!isStaticType(g.value(v).type)) return true;
  return false;
}

// Whether lowering has a compute definition for every op of n (else the node
// stays with the caller: the fallback, or lowering's own error).
bool lowerable(const Node& n) {
  if (n.op == kFusedOp && n.domain == kFuseLensDomain) {
    if (!n.body) return false;
    for (NodeId id : n.body->nodeIds())
      if (!lowerable(n.body->node(id))) return false;
    return true;
  }
  return drivesOwnShape(n) || computeClassOf(n) != ComputeClass::Unsupported;
}

// The node alone: its non-constant present inputs become graph inputs; outer
// constants stay constants, so shape inference sees them.
std::shared_ptr<const Graph> nodeGraph(const Graph& g, const Node& n, std::vector<int>& inputPos) {
  return std::make_shared<const Graph>(graphOfNode(g, n, [&](Graph& alone, size_t i) {
    const Value& v = g.value(n.inputs[i]);
    if (v.constant) {
      inputPos.push_back(-1);
      return alone.addConstant(v.name, v.constant);
    }
    inputPos.push_back(int(alone.inputs().size()));
    return alone.addInput("in" + std::to_string(i), v.type);
  }));
}

// The first value of s whose shape its input types leave unknown, if any.
const Value* unknownShape(const Graph& s) {
  for (NodeId id : s.nodeIds()) {
    const Node& n = s.node(id);
    if (drivesOwnShape(n)) continue;
    for (ValueId v : n.outputs)
      if (!isStaticType(s.value(v).type)) return &s.value(v);
  }
  return nullptr;
}

bool smallInts(const TensorData& t) {
  return (t.dtype == DType::I64 || t.dtype == DType::I32) && t.numel() <= kSmallInts;
}

std::string typeKey(const std::vector<const TensorData*>& in) {
  std::string k;
  for (const TensorData* t : in) k += t->type().str() + ";";
  return k;
}

enum class Answer { ByTypes, ByValues };

class NodeSpecializer {
 public:
  NodeSpecializer(std::shared_ptr<const Graph> g, CompileOptions opts, std::string where)
      : g_(g), opts_(opts), where_(std::move(where)), byTypes_(g, opts, kTypeSets) {}

  Expected<std::vector<TensorData>> run(const std::vector<const TensorData*>& in) {
    auto answer = answerFor(in);
    if (!answer) return answer.status();
    if (*answer == Answer::ByTypes) return byTypes_.run(in);
    auto sg = byValues(in);
    if (!sg) return sg.status();
    return (*sg)->run(in);
  }

 private:
  // Whether the input types alone give every shape (remembered per type set).
  Expected<Answer> answerFor(const std::vector<const TensorData*>& in) {
    std::string key = typeKey(in);
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = answers_.find(key); it != answers_.end()) return it->second;
    std::vector<TensorType> types;
    for (const TensorData* t : in) types.push_back(t->type());
    auto s = specializeGraph(*g_, types);
    if (!s) return Status::error(s.diagnostic().message, where_);
    Answer a = Answer::ByTypes;
    if (const Value* v = unknownShape(*s)) {
      bool anySmall = false;
      for (const TensorData* t : in) anySmall |= smallInts(*t);
      if (!anySmall)
        return Status::error("the shape of '" + v->name + "' is not known from the input shapes " +
                                 key + " so it cannot be compiled",
                             where_);
      a = Answer::ByValues;
    }
    if (answers_.size() >= kTypeSets) answers_.clear();
    answers_[key] = a;
    return a;
  }

  // The node graph with its small integer inputs as constants, for these values.
  Expected<std::shared_ptr<SpecializedGraph>> byValues(const std::vector<const TensorData*>& in) {
    std::string key = typeKey(in);
    for (const TensorData* t : in)
      if (smallInts(*t))
        for (int64_t i = 0; i < t->numel(); ++i) key += std::to_string(int64_t(t->at(i))) + ",";
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = valueSets_.begin(); it != valueSets_.end(); ++it)
      if (it->first == key) {
        valueSets_.splice(valueSets_.begin(), valueSets_, it);
        return valueSets_.front().second;
      }
    auto baked = std::make_shared<Graph>(*g_);
    std::vector<TensorType> types;
    for (size_t i = 0; i < in.size(); ++i) {
      types.push_back(in[i]->type());
      if (!smallInts(*in[i])) continue;
      ValueId input = baked->inputs()[i];
      ValueId c = baked->addConstant(baked->value(input).name + "_value",
                                     std::make_shared<const TensorData>(*in[i]));
      baked->replaceAllUses(input, c);
    }
    auto s = specializeGraph(*baked, types);
    if (!s) return Status::error(s.diagnostic().message, where_);
    if (const Value* v = unknownShape(*s))
      return Status::error("the shape of '" + v->name + "' is not known from the input shapes " +
                               typeKey(in) + " and values, so it cannot be compiled",
                           where_);
    auto sg = std::make_shared<SpecializedGraph>(baked, opts_, 1);
    valueSets_.emplace_front(key, sg);
    while (valueSets_.size() > kValueSets) valueSets_.pop_back();
    return sg;
  }

  std::shared_ptr<const Graph> g_;
  CompileOptions opts_;
  std::string where_;
  SpecializedGraph byTypes_;
  std::mutex mu_;
  std::map<std::string, Answer> answers_;
  std::list<std::pair<std::string, std::shared_ptr<SpecializedGraph>>> valueSets_;
};

}  // namespace

std::optional<Expected<DriverKernel>> lowerSpecializedDriver(const Graph& g, const Node& n,
                                                             const std::string&,
                                                             const CompileOptions& opts) {
  if (!touchesDynamic(g, n) || !lowerable(n)) return std::nullopt;
  std::string where = "node '" + n.name + "' (" + n.op + ", compiled at run time)";
  std::vector<int> inputPos;  // per present input: its graph input, or -1 (a constant)
  std::shared_ptr<const Graph> body;
  bool fused = n.op == kFusedOp && n.domain == kFuseLensDomain;
  if (fused) {
    body = n.body;
    for (size_t i = 0; i < body->inputs().size(); ++i) inputPos.push_back(int(i));
  } else {
    body = nodeGraph(g, n, inputPos);
  }
  CompileOptions inner = opts;
  inner.fallback = false;  // what runs here is compiled, or an error
  auto spec = std::make_shared<NodeSpecializer>(body, inner, where);
  std::vector<TensorType> outTypes;
  for (ValueId v : n.outputs) outTypes.push_back(g.value(v).type);
  size_t numInputs = body->inputs().size();
  DriverKernel d;
  d.summary = n.op + ": compiled at run time for the input shapes it meets (cached)";
  d.loopIr = "// compiled at run time for the input shapes each run meets\n";
  d.run = [spec, inputPos, numInputs, outTypes,
           where](const std::vector<const TensorData*>& in) -> Expected<std::vector<TensorData>> {
    if (in.size() != inputPos.size())
      return Status::error("internal: " + std::to_string(in.size()) + " inputs for " +
                               std::to_string(inputPos.size()),
                           where);
    std::vector<const TensorData*> gin(numInputs, nullptr);
    for (size_t i = 0; i < in.size(); ++i) {
      if (inputPos[i] < 0) continue;
      if (!in[i])
        return Status::error("internal: input " + std::to_string(i) + " is not computed", where);
      gin[size_t(inputPos[i])] = in[i];
    }
    auto outs = spec->run(gin);
    if (!outs) return outs.status();
    for (size_t k = 0; k < outTypes.size() && k < outs->size(); ++k) {
      const TensorData& t = (*outs)[k];
      auto shape = outTypes[k].staticShape();
      if (t.dtype != outTypes[k].dtype ||
          (outTypes[k].rankKnown && t.rank() != outTypes[k].rank()) || (shape && t.shape != *shape))
        return Status::error("output " + std::to_string(k) + " came out as " + t.type().str() +
                                 "; the graph declares " + outTypes[k].str(),
                             where);
    }
    return outs;
  };
  return Expected<DriverKernel>(std::move(d));
}

}  // namespace fuselens
