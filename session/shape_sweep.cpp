// runSweep: for every value of the swept dim, the model bound to it (the
// eager reference and the random inputs), the module for its shape or bucket
// (compiled once, through the compile cache), a timed compiled run, and the
// verdicts. Modules are kept for the whole sweep, one per shape or bucket.
#include "session/shape_sweep.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <set>

#include "codegen/symbolic/symbolic_plan.h"
#include "core/ir/dim_expr.h"
#include "passes/pad_mask.h"
#include "session/compile_cache.h"
#include "session/pipeline_choice.h"
#include "session/session.h"
#include "session/sweep_dynamic.h"
#include "session/sweep_tensors.h"

namespace fuselens {
namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

Expected<int64_t> positiveInt(const std::string& text, const std::string& where) {
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v < 1)
    return Expected<int64_t>::error("'" + text + "' is not a positive integer", where);
  return int64_t(v);
}

Expected<std::vector<int64_t>> intList(const std::string& text, const std::string& where) {
  std::vector<int64_t> out;
  size_t at = 0;
  while (at <= text.size()) {
    size_t comma = text.find(',', at);
    if (comma == std::string::npos) comma = text.size();
    auto v = positiveInt(text.substr(at, comma - at), where);
    if (!v) return v.status();
    out.push_back(*v);
    at = comma + 1;
  }
  return out;
}

// The dim name and the text after '=' of "dim=...".
Expected<std::pair<std::string, std::string>> splitSpec(const std::string& text,
                                                        const std::string& flag) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    return Expected<std::pair<std::string, std::string>>::error(
        "expected NAME=..., e.g. seq=1:300:37", flag + " " + text);
  return std::make_pair(text.substr(0, eq), text.substr(eq + 1));
}

}  // namespace

Expected<SweepSpec> parseSweepSpec(const std::string& text) {
  const std::string where = "--sweep " + text;
  auto parts = splitSpec(text, "--sweep");
  if (!parts) return parts.status();
  SweepSpec spec{parts->first, {}};
  const std::string& range = parts->second;
  if (range.find(':') == std::string::npos) {
    auto list = intList(range, where);
    if (!list) return list.status();
    spec.values = *list;
    return spec;
  }
  size_t c1 = range.find(':'), c2 = range.find(':', c1 + 1);
  if (c2 == std::string::npos)
    return Status::error("a range is START:STOP:STEP, e.g. 1:300:37", where);
  auto start = positiveInt(range.substr(0, c1), where);
  auto stop = positiveInt(range.substr(c1 + 1, c2 - c1 - 1), where);
  auto step = positiveInt(range.substr(c2 + 1), where);
  for (const auto* e : {&start, &stop, &step})
    if (!*e) return e->status();
  if (*stop < *start) return Status::error("the range stops before it starts", where);
  for (int64_t v = *start; v <= *stop; v += *step) spec.values.push_back(v);
  return spec;
}

Expected<std::vector<int64_t>> parseBuckets(const std::string& text, const std::string& dim,
                                            int64_t upTo) {
  const std::string where = "--buckets " + text;
  auto parts = splitSpec(text, "--buckets");
  if (!parts) return parts.status();
  if (parts->first != dim)
    return Status::error("buckets are for the swept dim '" + dim + "'", where);
  const std::string& how = parts->second;
  std::vector<int64_t> buckets;
  if (how == "pow2") {
    for (int64_t b = 1;; b *= 2) {
      buckets.push_back(b);
      if (b >= upTo) break;
    }
  } else if (how.rfind("step:", 0) == 0) {
    auto step = positiveInt(how.substr(5), where);
    if (!step) return step.status();
    for (int64_t b = *step;; b += *step) {
      buckets.push_back(b);
      if (b >= upTo) break;
    }
  } else {
    auto list = intList(how, where);
    if (!list) return list.status();
    buckets = *list;
    std::sort(buckets.begin(), buckets.end());
    buckets.erase(std::unique(buckets.begin(), buckets.end()), buckets.end());
  }
  return buckets;
}

std::string SweepReport::summary() const {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "%zu runs, %zu compile%s (%zu cache hit%s), compile %.3g s, run %.3g s, "
                "padding waste %.1f%%",
                runs.size(), compiles, compiles == 1 ? "" : "s", cacheHits,
                cacheHits == 1 ? "" : "s", compileSeconds, runSeconds, paddingWaste * 100);
  std::string s = buf;
  if (dynamic)
    s += ", " + std::to_string(symbolicKernels) + " symbolic kernel" +
         (symbolicKernels == 1 ? "" : "s") + " (" + std::to_string(perShapeKernels.size()) +
         " per shape), " + std::to_string(kernelCompiles) + " kernel compile" +
         (kernelCompiles == 1 ? "" : "s");
  if (allMatch) s += *allMatch ? ", all match eager" : ", NOT all match eager";
  return s;
}

namespace {

class Sweeper {
 public:
  Sweeper(const Graph& model, const std::string& label, const SweepRequest& request,
          const CancelToken& cancel)
      : model_(model), label_(label), req_(request), cancel_(cancel) {}

  Expected<SweepReport> run(const SweepObserver& observer);

 private:
  struct Module {
    std::unique_ptr<Session> session;
    int64_t elements = 0;  // computed by the model at this shape, without masking
  };
  const std::string& dim() const { return req_.sweep.dim; }
  Expected<Session> bound(const Graph& g, int64_t value) const;
  Expected<Module*> moduleFor(int64_t shape, SweepRun& run);
  Status runOne(int64_t value, SweepRun& run);

  const Graph& model_;
  const std::string& label_;
  const SweepRequest& req_;
  const CancelToken& cancel_;
  CompileCache cache_ = CompileCache::fromEnvironment();
  std::map<int64_t, Module> modules_;
  std::optional<SymbolicTableReport> symbolic_;
  SweepReport rep_;
};

Expected<Session> Sweeper::bound(const Graph& g, int64_t value) const {
  Session s;
  FL_RETURN_IF_ERROR(s.open(Graph(g), label_));
  FL_RETURN_IF_ERROR(s.bindDims({{dim(), value}}));
  return s;
}

Expected<Sweeper::Module*> Sweeper::moduleFor(int64_t shape, SweepRun& run) {
  if (auto it = modules_.find(shape); it != modules_.end()) return &it->second;
  Graph graph = model_;
  std::string pipeline = req_.pipeline;
  if (!req_.buckets.empty()) {
    const std::string mask = "pad-mask{dim=" + dim() + "}";
    auto specs = parsePipeline(mask);
    if (!specs) return specs.status();
    auto masked = runPipeline(model_, *specs, {}, cancel_, hostPipelineOptions());
    if (!masked) return masked.status();
    graph = masked->snapshots.back().graph();
    pipeline = mask + " then " + pipeline;  // what the cache's graph hash stands for
  }
  Module m;
  auto unmasked = bound(model_, shape);
  if (!unmasked) return unmasked.status();
  m.elements = computedElements(unmasked->original());
  auto s = bound(graph, shape);
  if (!s) return s.status();
  m.session = std::make_unique<Session>(std::move(*s));
  FL_RETURN_IF_ERROR(m.session->optimize(req_.pipeline, {}, cancel_));
  CompileCacheEntry key;
  key.graphHash = compileCacheGraphHash(graph, pipeline);
  key.shapes = dim() + "=" + std::to_string(shape);
  CompileOptions opts;
  double tableSeconds = 0;
  if (req_.dynamic) {
    if (!symbolic_) {
      auto t = symbolicKernelsFor(model_, label_, dim(), req_.pipeline, cancel_);
      if (!t) return t.status();
      symbolic_ = std::move(*t);
      tableSeconds = symbolic_->seconds;
      rep_.symbolicKernels = symbolic_->symbolic;
      rep_.perShapeKernels = symbolic_->reasons;
      rep_.symbolicSamples = symbolic_->samples;
      rep_.symbolicSeconds = tableSeconds;
    }
    opts.symbolic = symbolic_->table;
    opts.schedule = symbolicSchedule();
    key.shapes += " symbolic";
  }
  std::string note;
  auto compiled = compileCached(*m.session, cache_, key, note, cancel_, opts);
  if (!compiled) return compiled.status();
  if (!note.empty()) rep_.notes.push_back(note);
  const CompileStats stats = m.session->compiled()->stats();
  run.kernels = stats.kernels;
  run.kernelCompiles = stats.compiledKernels;
  run.symbolicKernels = stats.symbolicKernels;
  run.verifiedSymbolic = stats.verifiedSymbolic;
  run.compiled = true;
  run.cacheHit = compiled->hit;
  if (req_.dynamic) {
    // A shape whose kernels all came from earlier runs' symbolic code is no
    // compile; the first run builds the table and the kernels.
    const bool first = tableSeconds > 0;
    run.compiled = first || stats.compiledKernels > 0;
    run.cacheHit = run.compiled && stats.compiledKernels == 0;
  }
  run.compileSeconds = compiled->seconds + tableSeconds;
  run.firstCompileSeconds = compiled->firstSeconds;
  return &modules_.emplace(shape, std::move(m)).first->second;
}

Status Sweeper::runOne(int64_t value, SweepRun& run) {
  run.value = run.bucket = value;
  if (!req_.buckets.empty()) {
    auto b = std::lower_bound(req_.buckets.begin(), req_.buckets.end(), value);
    if (b == req_.buckets.end())
      return Status::error(dim() + "=" + std::to_string(value) + " is beyond the largest bucket " +
                               std::to_string(req_.buckets.back()) + "; add a larger bucket",
                           "--buckets");
    run.bucket = *b;
  }
  auto exact = bound(model_, value);
  if (!exact) return exact.status();
  auto inputs = exact->randomInputs(req_.seed);
  if (!inputs) return inputs.status();
  auto module = moduleFor(run.bucket, run);
  if (!module) return module.status();
  Session& s = *(*module)->session;

  std::map<std::string, TensorData> feed = *inputs;
  if (!req_.buckets.empty()) {
    for (ValueId v : model_.inputs()) {
      const Value& in = model_.value(v);
      feed[in.name] = resizeAlong(feed[in.name], axesOfSymbol(in.type, dim()), run.bucket);
    }
    feed[padMaskInputName(dim())] = padMaskKeep(value, run.bucket);
  }
  auto start = std::chrono::steady_clock::now();
  auto outputs = s.run(Engine::Cpu, feed, {}, cancel_);
  if (!outputs) return outputs.status();
  run.runSeconds = secondsSince(start);
  auto sliced = [&](std::map<std::string, TensorData> outs) {
    for (ValueId v : model_.outputs()) {
      const Value& out = model_.value(v);
      if (auto it = outs.find(out.name); it != outs.end())
        it->second = resizeAlong(it->second, axesOfSymbol(out.type, dim()), value);
    }
    return outs;
  };
  run.elements = (*module)->elements;
  run.paddedElements = run.elements - computedElements(exact->original());

  if (!req_.checkEager && !req_.padCheck) return Status::ok();
  auto refs = runReferences(exact->original(), *inputs, req_.compare.rounding(), cancel_);
  if (!refs) return refs.status();
  if (req_.checkEager) {
    OutputVerdict v = judgeOutputs(exact->original(), *refs, sliced(*outputs), req_.compare);
    run.match = v.match;
    run.verdict = v.text;
  }
  if (req_.padCheck && !req_.buckets.empty()) {
    auto padded = s.run(Engine::Eager, feed, {}, cancel_);
    if (!padded) return padded.status();
    OutputVerdict v = judgeOutputs(exact->original(), *refs, sliced(*padded), req_.compare);
    run.padMatch = v.match;
    run.padVerdict = v.text;
  }
  return Status::ok();
}

Expected<SweepReport> Sweeper::run(const SweepObserver& observer) {
  rep_.dim = dim();
  rep_.buckets = req_.buckets;
  rep_.dynamic = req_.dynamic;
  rep_.cacheDir = cache_.dir();
  int64_t elements = 0, padded = 0;
  for (size_t i = 0; i < req_.sweep.values.size(); ++i) {
    if (cancel_.cancelled()) return Status::error("cancelled", "sweep");
    SweepRun run;
    FL_RETURN_IF_ERROR(runOne(req_.sweep.values[i], run));
    rep_.compiles += run.compiled;
    rep_.kernelCompiles += run.kernelCompiles;
    rep_.cacheHits += run.cacheHit;
    rep_.compileSeconds += run.compileSeconds;
    rep_.firstCompileSeconds += run.firstCompileSeconds;
    rep_.runSeconds += run.runSeconds;
    elements += run.elements;
    padded += run.paddedElements;
    for (const auto& check : {run.match, run.padMatch})
      if (check) rep_.allMatch = rep_.allMatch.value_or(true) && *check;
    rep_.runs.push_back(run);
    if (observer) observer(run, i, req_.sweep.values.size());
  }
  rep_.paddingWaste = elements > 0 ? double(padded) / double(elements) : 0;
  return rep_;
}

}  // namespace

Expected<SweepReport> runSweep(const Graph& model, const std::string& label,
                               const SweepRequest& request, const SweepObserver& observer,
                               const CancelToken& cancel) {
  if (request.sweep.values.empty()) return Status::error("no value to sweep", "--sweep");
  std::set<std::string> symbols;
  for (ValueId v : model.valueIds())
    for (const Dim& d : model.value(v).type.shape) symbols.merge(dimSymbols(d));
  if (!symbols.count(request.sweep.dim)) {
    std::string known;
    for (const std::string& s : symbols) known += (known.empty() ? "" : ", ") + s;
    return Status::error(
        "the model has no symbolic dim named '" + request.sweep.dim + "'" +
            (known.empty() ? " (all its dims are bound)" : " (it has: " + known + ")"),
        "--sweep " + request.sweep.dim);
  }
  if (request.dynamic && !request.buckets.empty())
    return Status::error("symbolic kernels run every length unpadded: give --dynamic or --buckets",
                         "--dynamic");
  Sweeper sweeper(model, label, request, cancel);
  return sweeper.run(observer);
}

}  // namespace fuselens
