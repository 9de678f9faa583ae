// Session: import -> optimize -> compile -> compare, each step invalidating the
// results of the ones after it.
#include "session/session.h"

#include <algorithm>
#include <set>

#include "codegen/driver/body_pipeline.h"
#include "core/eager/interpreter.h"
#include "core/io/npy.h"
#include "core/ir/dim_expr.h"
#include "core/ops/registry.h"
#include "session/dim_suggest.h"
#include "session/pipeline_choice.h"
#include "session/session_file.h"

namespace fuselens {
GraphStats graphStats(const Graph& g) {
  GraphStats s;
  for (NodeId id : g.nodeIds()) {
    const Node& n = g.node(id);
    ++s.nodes;
    ++s.opHistogram[n.domain.empty() ? n.op : n.domain + "." + n.op];
    if (n.op == kFusedOp && n.domain == kFuseLensDomain) ++s.fusedGroups;
    if (needsKernel(g, n)) ++s.kernels;  // the launches codegen makes
  }
  return s;
}

Status Session::open(const std::string& modelPath, const Progress& progress,
                     const CancelToken& cancel) {
  report(progress, 0.0, "import " + modelPath);
  auto imported = importOnnxFile(modelPath);
  if (!imported) return imported.status();
  if (cancel.cancelled()) return Status::error("cancelled", "import");
  model_ = std::make_unique<ImportedModel>(std::move(*imported));
  path_ = modelPath;
  pipeline_.clear();
  boundShapes_.clear();
  dropResults();
  report(progress, 1.0, "imported");
  return Status::ok();
}

std::vector<std::string> Session::symbolicDims() const {
  std::set<std::string> symbols;
  if (model_)
    for (ValueId v : model_->graph.valueIds())
      for (const Dim& d : model_->graph.value(v).type.shape)
        symbols.merge(dimSymbols(d));  // `seq*2` is bound by binding `seq`
  return {symbols.begin(), symbols.end()};
}

Status Session::bindDims(const std::map<std::string, int64_t>& dims) {
  if (!model_) return Status::error("no model is open");
  Graph& g = model_->graph;
  const std::vector<std::string> symbols = symbolicDims();
  for (const auto& [name, value] : dims) {
    if (std::count(symbols.begin(), symbols.end(), name)) continue;
    std::string known;
    for (const auto& s : symbols) known += (known.empty() ? "" : ", ") + s;
    return Status::error(
        "the model has no symbolic dim named '" + name + "'" +
            (known.empty() ? " (all its dims are static)" : " (it has: " + known + ")"),
        "--dim " + name);
  }
  for (ValueId v : g.valueIds())
    for (Dim& d : g.mutableValue(v).type.shape) d = bindDim(d, dims);
  FL_RETURN_IF_ERROR(inferGraphTypes(g));
  dropResults();
  return Status::ok();
}

Expected<bool> Session::bindInputShapes(const std::map<std::string, TensorData>& inputs) {
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const auto& [name, t] : inputs) shapes[name] = t.shape;
  return bindInputShapes(shapes);
}

Expected<bool> Session::bindInputShapes(const std::map<std::string, std::vector<int64_t>>& shapes) {
  if (!model_) return Expected<bool>::error("no model is open");
  Graph& g = model_->graph;
  std::map<std::string, int64_t> symbols;
  std::vector<std::pair<ValueId, std::vector<int64_t>>> fixes;
  for (ValueId v : g.inputs()) {
    const Value& val = g.value(v);
    auto it = shapes.find(val.name);
    if (it == shapes.end() || val.type.isStatic()) continue;
    const std::vector<int64_t>& shape = it->second;
    const std::string where = "input '" + val.name + "'";
    if (val.type.rankKnown && val.type.shape.size() != shape.size())
      return Status::error("the tensor has rank " + std::to_string(shape.size()) +
                               " but the model declares " + val.type.str(),
                           where);
    for (size_t d = 0; val.type.rankKnown && d < shape.size(); ++d) {
      const Dim& dim = val.type.shape[d];
      if (dim.isStatic() && dim.value != shape[d])
        return Status::error("dim " + std::to_string(d) + " is " + std::to_string(shape[d]) +
                                 " but the model declares " + val.type.str(),
                             where);
      // An input dim written as an expression (`s0+1`) binds nothing itself.
      if (dim.symbol.empty() || dimSymbols(dim) != std::set<std::string>{dim.symbol}) continue;
      auto [at, fresh] = symbols.emplace(dim.symbol, shape[d]);
      if (!fresh && at->second != shape[d])
        return Status::error("dim '" + dim.symbol + "' is " + std::to_string(shape[d]) +
                                 " here but " + std::to_string(at->second) + " in another input",
                             where);
    }
    fixes.emplace_back(v, shape);
  }
  if (fixes.empty()) return false;
  for (ValueId v : g.valueIds())
    for (Dim& d : g.mutableValue(v).type.shape) d = bindDim(d, symbols);
  for (const auto& [v, shape] : fixes) {
    TensorType& t = g.mutableValue(v).type;
    t = TensorType::of(t.dtype, shape);
    boundShapes_[g.value(v).name] = shape;
  }
  FL_RETURN_IF_ERROR(inferGraphTypes(g));
  dropResults();
  return true;
}

void Session::dropResults() {
  snapshots_.clear();
  decisions_.clear();
  compiled_.reset();
  report_.reset();
  runs_.reset();
  keptNote_.clear();
  isolated_.reset();
  taps_.reset();
  profile_.reset();
}

const Graph& Session::finalGraph() const {
  return snapshots_.empty() ? model_->graph : snapshots_.back().graph();
}

Status Session::optimize(const std::string& pipeline, const Progress& progress,
                         const CancelToken& cancel) {
  if (!model_) return Status::error("no model is open");
  auto specs = parsePipeline(pipeline);
  if (!specs) return specs.status();
  auto result = runPipeline(model_->graph, *specs, progress, cancel, hostPipelineOptions());
  if (!result) return result.status();
  pipeline_ = pipeline;
  snapshots_ = std::move(result->snapshots);
  decisions_ = std::move(result->decisions);
  compiled_.reset();
  report_.reset();
  runs_.reset();
  keptNote_.clear();
  isolated_.reset();
  taps_.reset();
  profile_.reset();
  return Status::ok();
}

namespace {

// The pipeline string's passes over one body specialization, quietly: a body
// the passes refuse compiles as written (no reproducer file for it).
std::shared_ptr<const BodyPipeline> bodyPipelineOf(const std::string& pipeline) {
  auto specs = parsePipeline(pipeline);
  if (!specs || specs->empty()) return nullptr;
  return std::make_shared<const BodyPipeline>(
      [specs = *specs](const Graph& body) -> Expected<Graph> {
        Graph g = body;
        g.markAsOriginal();
        PipelineOptions quiet = hostPipelineOptions();
        quiet.writeReproducer = false;
        auto r = runPipeline(g, specs, {}, {}, quiet);
        if (!r) return r.status();
        if (r->snapshots.empty()) return g;
        return r->snapshots.back().graph();
      });
}

}  // namespace

Status Session::compile(const CompileOptions& opts, const Progress& progress,
                        const CancelToken& cancel) {
  if (!model_) return Status::error("no model is open");
  CompileOptions withPlan = opts;  // the memory-plan pass's plan, when it ran last
  if (!withPlan.bufferPlan && !snapshots_.empty())
    withPlan.bufferPlan = snapshots_.back().record.bufferPlan;
  // Control-flow bodies compile through the model's own graph passes.
  ScopedBodyPipeline bodies(bodyPipelineOf(pipeline_));
  auto module = compileGraph(finalGraph(), withPlan, progress, cancel);
  if (!module) return module.status();
  compiled_ = std::move(*module);
  compileOptions_ = opts;
  profile_.reset();
  taps_.reset();  // they were computed from the module just replaced
  return Status::ok();
}

namespace {
// "--dim seq=N (suggested: --dim seq=128)", for each symbol of the dim's expression.
std::string dimFlags(const ImportedModel& m, const Dim& d) {
  std::string flags;
  for (const std::string& s : dimSymbols(d))
    flags += (flags.empty() ? "--dim " : " and --dim ") + s + "=N" +
             suggestedDimFlag(m.graph, s, m.metadata);
  return flags;
}
}  // namespace

Expected<std::map<std::string, TensorData>> Session::randomInputs(
    uint64_t seed, const std::map<std::string, TensorData>& skip) const {
  if (!model_) return Expected<std::map<std::string, TensorData>>::error("no model is open");
  std::map<std::string, TensorData> inputs;
  const Graph& g = model_->graph;
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const Value& v = g.value(g.inputs()[i]);
    if (skip.count(v.name)) continue;
    for (const Dim& d : v.type.shape)
      if (!d.isStatic())
        return Status::error(
            "has the dynamic dim '" + d.str() + "' in " + v.type.str() +
                "; give the input a shape (--shape " + v.name +
                "=AxB..., Input shapes in the GUI)" +
                (d.symbol.empty() ? std::string(" or a tensor")
                                  : " or bind the dim with " + dimFlags(*model_, d)),
            "input '" + v.name + "'");
    auto t = randomTensor(v.type, seed + i);
    if (!t) return Status::error(t.message(), "input '" + v.name + "'");
    inputs[v.name] = std::move(*t);
  }
  return inputs;
}

Status Session::save(const std::string& sessionPath) const {
  if (!model_) return Status::error("no model is open", sessionPath);
  auto hash = hashFile(path_);
  if (!hash) return hash.status();
  return saveSessionFile(sessionPath, SessionFile{path_, *hash, pipeline_, compareOptions, seed,
                                                  bookmarks, boundShapes_});
}

Expected<std::vector<Diagnostic>> Session::restore(const std::string& sessionPath,
                                                   const Progress& progress,
                                                   const CancelToken& cancel) {
  auto file = loadSessionFile(sessionPath);
  if (!file) return file.status();
  std::vector<Diagnostic> warnings;
  auto hash = hashFile(file->modelPath);
  if (!hash)
    return Status::error("the model it names cannot be read: " + file->modelPath, sessionPath);
  if (!file->modelHash.empty() && *hash != file->modelHash)
    warnings.push_back(
        {Severity::Warning, file->modelPath, "the model changed since the session was saved"});
  FL_RETURN_IF_ERROR(open(file->modelPath, progress, cancel));
  if (!file->inputShapes.empty()) {
    auto bound = bindInputShapes(file->inputShapes);
    if (!bound) return bound.status();
  }
  FL_RETURN_IF_ERROR(optimize(file->pipeline, progress, cancel));
  compareOptions = file->compare;
  seed = file->seed;
  bookmarks = file->bookmarks;
  return warnings;
}

}  // namespace fuselens
