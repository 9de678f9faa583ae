// Session's face-level calls: open a model as a user asks for it (dims bound,
// dynamic inputs fixed, pipeline run), gather input tensors, and run the model
// on either engine. The CLI and the GUI both go through these.
#include <algorithm>

#include "core/eager/interpreter.h"
#include "core/io/npy.h"
#include "core/ir/verifier.h"
#include "session/session.h"

namespace fuselens {
namespace {

// Whether `g` has a graph input named `name` (--shape and --input name inputs only).
bool hasInput(const Graph& g, const std::string& name) {
  for (ValueId v : g.inputs())
    if (g.value(v).name == name) return true;
  return false;
}

}  // namespace

Status Session::open(const OpenRequest& request, const Progress& progress,
                     const CancelToken& cancel) {
  FL_RETURN_IF_ERROR(open(request.model, progress, cancel));
  if (!request.dims.empty()) FL_RETURN_IF_ERROR(bindDims(request.dims));
  if (!request.shapes.empty()) {
    for (const auto& [name, dims] : request.shapes)
      if (!hasInput(original(), name))
        return Status::error("the model has no input named '" + name + "'", "--shape " + name);
    auto bound = bindInputShapes(request.shapes);
    if (!bound) return bound.status();
  }
  defaultedDims_.clear();
  if (request.dimsDefault >= 0) {
    for (const std::string& d : symbolicDims())
      if (std::find(request.keepSymbolic.begin(), request.keepSymbolic.end(), d) ==
          request.keepSymbolic.end())
        defaultedDims_[d] = request.dimsDefault;
    if (!defaultedDims_.empty()) FL_RETURN_IF_ERROR(bindDims(defaultedDims_));
  }
  return optimize(request.pipeline, progress, cancel);
}

Status Session::open(Graph graph, const std::string& label) {
  graph.markAsOriginal();
  FL_RETURN_IF_ERROR(verifyGraph(graph));
  model_ = std::make_unique<ImportedModel>();
  model_->graph = std::move(graph);
  path_ = label;
  pipeline_.clear();
  boundShapes_.clear();
  dropResults();
  return Status::ok();
}

Status Session::fitToInputs(const std::map<std::string, TensorData>& inputs,
                            const Progress& progress, const CancelToken& cancel) {
  auto changed = bindInputShapes(inputs);
  if (!changed) return changed.status();
  if (!*changed) return Status::ok();
  return optimize(pipeline_, progress, cancel);
}

Expected<std::map<std::string, TensorData>> Session::inputs(const InputRequest& request) const {
  using Result = Expected<std::map<std::string, TensorData>>;
  if (!model_) return Result::error("no model is open");
  std::map<std::string, TensorData> out;
  for (const auto& [name, path] : request.files) {
    if (!hasInput(original(), name))
      return Result::error("the model has no input named '" + name + "'",
                           "--input " + name + "=" + path);
    auto t = readNpy(path);
    if (!t) return t.status();
    out[name] = std::move(*t);
  }
  if (!request.random && !out.empty()) return out;
  auto random = randomInputs(request.seed, out);
  if (!random) return random.status();
  for (auto& [name, t] : *random) out.emplace(name, std::move(t));  // given ones win
  return out;
}

Expected<std::map<std::string, TensorData>> Session::run(
    Engine engine, const std::map<std::string, TensorData>& inputs, const Progress& progress,
    const CancelToken& cancel) {
  using Result = Expected<std::map<std::string, TensorData>>;
  if (!model_) return Result::error("no model is open");
  std::map<std::string, TensorData> outputs;
  if (engine == Engine::Eager) {
    EagerOptions opts;
    opts.keepIntermediates = false;
    auto r = runEager(original(), inputs, opts, progress, cancel);
    if (!r) return r.status();
    for (ValueId v : original().outputs()) outputs[original().value(v).name] = *r->find(v);
    return outputs;
  }
  if (engine == Engine::Cuda) {
    auto r = runCuda(inputs, progress, cancel);
    if (!r) return r.status();
    const Graph& g = finalGraph();
    for (size_t i = 0; i < g.outputs().size(); ++i)
      outputs[g.value(g.outputs()[i]).name] = std::move((*r)[i]);
    return outputs;
  }
  FL_RETURN_IF_ERROR(fitToInputs(inputs, progress, cancel));
  if (!compiled_) FL_RETURN_IF_ERROR(compile(compileOptions_, progress, cancel));
  auto r = compiled_->run(inputs, cancel);
  if (!r) return r.status();
  const Graph& g = finalGraph();
  for (ValueId v : g.outputs()) outputs[g.value(v).name] = *(*r)[v.index];
  return outputs;
}

}  // namespace fuselens
