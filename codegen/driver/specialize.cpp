// Specialization of a graph for concrete input types (see specialize.h).
#include "codegen/driver/specialize.h"

#include <algorithm>

#include "codegen/runtime/kernel_hook.h"
#include "core/ops/registry.h"

namespace fuselens {

Expected<Graph> specializeGraph(const Graph& g, const std::vector<TensorType>& inputTypes) {
  if (inputTypes.size() != g.inputs().size())
    return Status::error("graph '" + g.name + "' takes " + std::to_string(g.inputs().size()) +
                         " inputs, not " + std::to_string(inputTypes.size()));
  Graph s = g;
  for (size_t i = 0; i < inputTypes.size(); ++i) s.mutableValue(s.inputs()[i]).type = inputTypes[i];
  Status st = inferGraphTypes(s);
  if (!st)
    return Status::error("graph '" + g.name +
                         "' cannot take these input types: " + st.diagnostic().str());
  return s;
}

SpecializedGraph::SpecializedGraph(std::shared_ptr<const Graph> g, CompileOptions opts,
                                   size_t maxCached, bool fold,
                                   std::shared_ptr<const BodyPipeline> pipeline)
    : g_(std::move(g)),
      opts_(std::move(opts)),
      maxCached_(std::max<size_t>(1, maxCached)),
      fold_(fold),
      pipeline_(std::move(pipeline)) {}

Expected<SpecializedGraph::Key> SpecializedGraph::keyOf(const std::vector<TensorType>& types) {
  Key key;
  for (const TensorType& t : types) {
    auto shape = t.staticShape();
    if (!shape)
      return Status::error("the input type " + t.str() +
                           " is not static; specialization needs "
                           "the concrete types met at run time");
    key.emplace_back(t.dtype, *shape);
  }
  return key;
}

Expected<std::shared_ptr<const CompiledModule>> SpecializedGraph::moduleFor(
    const std::vector<TensorType>& types, bool* typesRejected) {
  auto e = entryFor(types, typesRejected);
  if (!e) return e.status();
  return e->module;
}

Expected<SpecializedGraph::Entry> SpecializedGraph::entryFor(const std::vector<TensorType>& types,
                                                             bool* typesRejected) {
  if (typesRejected) *typesRejected = false;
  auto key = keyOf(types);
  if (!key) return key.status();
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = cache_.begin(); it != cache_.end(); ++it)
    if (it->first == *key) {
      cache_.splice(cache_.begin(), cache_, it);  // most recently used first
      return cache_.front().second;
    }
  auto spec = specializeGraph(*g_, types);
  if (spec && fold_)
    if (Status st = foldKnownValues(*spec, opts_); !st)
      spec = Status::error("graph '" + g_->name +
                           "' cannot take these input types: " + st.diagnostic().str());
  if (!spec) {
    if (typesRejected) *typesRejected = true;
    return spec.status();
  }
  if (pipeline_)
    if (auto piped = (*pipeline_)(*spec)) spec = std::move(*piped);
  ScopedBodyPipeline nested(pipeline_);
  auto mod = compileGraph(*spec, opts_);
  if (!mod) return mod.status();
  ++compiles_;
  Entry e{std::shared_ptr<const CompiledModule>(std::move(*mod)), spec->outputs(), {}};
  for (ValueId o : e.outputs) e.outputNames.push_back(spec->value(o).name);
  cache_.emplace_front(std::move(*key), std::move(e));
  while (cache_.size() > maxCached_) cache_.pop_back();
  return cache_.front().second;
}

Expected<std::vector<TensorData>> SpecializedGraph::run(
    const std::vector<const TensorData*>& inputs, const CancelToken& cancel) {
  const Graph& g = *g_;
  if (inputs.size() != g.inputs().size())
    return Status::error("graph '" + g.name + "' takes " + std::to_string(g.inputs().size()) +
                         " inputs, not " + std::to_string(inputs.size()));
  std::vector<TensorType> types;
  std::map<std::string, TensorData> named;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& in = g.value(g.inputs()[i]);
    TensorData t;
    if (inputs[i]) {
      t = *inputs[i];
    } else if (in.users.empty() && !g.isGraphOutput(in.id)) {
      t = TensorData(in.type.dtype, {0});  // unused: any tensor of its dtype will do
    } else {
      return Status::error("graph '" + g.name + "' input '" + in.name + "' is not given");
    }
    types.push_back(t.type());
    named[in.name] = std::move(t);
  }
  auto entry = entryFor(types);
  if (!entry) return entry.status();
  // The deployment path (one arena kept between runs, no tensor per kernel)
  // unless a hook watches the kernels' outputs, which only run() calls.
  if (!afterKernelHook() && entry->module->arenaBytes() >= 0) {
    std::map<std::string, TensorData> out;
    FL_RETURN_IF_ERROR(entry->module->runInto(named, out, cancel));
    std::vector<TensorData> outs;
    for (const std::string& name : entry->outputNames) {
      auto it = out.find(name);
      if (it == out.end())
        return Status::error("internal: graph '" + g.name + "' produced no output '" + name + "'");
      outs.push_back(it->second);
    }
    return outs;
  }
  auto slots = entry->module->run(named, cancel);
  if (!slots) return slots.status();
  std::vector<TensorData> outs;
  for (size_t i = 0; i < entry->outputs.size(); ++i) {
    ValueId o = entry->outputs[i];
    if (size_t(o.index) >= slots->size() || !(*slots)[o.index])
      return Status::error("internal: graph '" + g.name + "' produced no value for output " +
                           std::to_string(i));
    outs.push_back(std::move(*(*slots)[o.index]));
  }
  return outs;
}

bool SpecializedGraph::declaredStatic() const {
  for (ValueId v : g_->inputs()) {
    const TensorType& t = g_->value(v).type;
    if (!t.rankKnown || !t.isStatic()) return false;
  }
  return true;
}

Expected<std::string> SpecializedGraph::precompileLoopIr() {
  std::vector<TensorType> types;
  for (ValueId v : g_->inputs()) types.push_back(g_->value(v).type);
  auto mod = moduleFor(types);
  if (!mod) return mod.status();
  return (*mod)->loopIrText();
}

size_t SpecializedGraph::cachedCount() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cache_.size();
}

size_t SpecializedGraph::compileCount() const {
  std::lock_guard<std::mutex> lock(mu_);
  return compiles_;
}

}  // namespace fuselens
