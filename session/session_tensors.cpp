// Session::inspectTensor and what it stands on: compare keeps its runs'
// tensors (eager, exact, sample, compiled) for the last run, within
// tensorBudgetBytes, so the inspector shows exactly what compare judged
// rather than running the model again. Over the budget it keeps the
// kernel-boundary tensors only (what compare compared), and past that none.
#include <set>

#include "core/ir/layout.h"
#include "session/compared_runs.h"
#include "session/session.h"

namespace fuselens {
namespace {

size_t bytesOf(const std::vector<std::optional<TensorData>>& ts) {
  size_t n = 0;
  for (const auto& t : ts)
    if (t) n += t->bytes.size();
  return n;
}

size_t bytesOf(const ReferenceRuns& refs, const std::vector<std::optional<TensorData>>& compiled) {
  size_t n = bytesOf(refs.eager.tensors) + bytesOf(compiled);
  if (refs.exact) n += bytesOf(refs.exact->tensors);
  if (refs.sample) n += bytesOf(refs.sample->tensors);
  return n;
}

void keepOnly(std::vector<std::optional<TensorData>>& ts, const std::set<int32_t>& keep) {
  for (size_t i = 0; i < ts.size(); ++i)
    if (!keep.count(int32_t(i))) ts[i].reset();
}

std::string sizeText(size_t bytes) {
  if (bytes < (size_t(1) << 20)) return std::to_string((bytes + 1023) >> 10) + " KB";
  return std::to_string((bytes + (1 << 20) - 1) >> 20) + " MB";
}

// A tensor of the kept runs, shared with them (aliasing: no copy).
template <class Runs>
std::shared_ptr<const TensorData> share(const std::shared_ptr<Runs>& runs, const TensorData* t) {
  return t ? std::shared_ptr<const TensorData>(runs, t) : nullptr;
}

}  // namespace

void Session::keepRuns(ComparedRuns runs) {
  runs_.reset();
  keptNote_.clear();
  const size_t all = bytesOf(runs.refs, runs.compiled);
  if (all <= tensorBudgetBytes) {
    runs_ = std::make_shared<const ComparedRuns>(std::move(runs));
    return;
  }
  // Over the budget: the reference tensors of kernel boundaries only.
  const Graph& g = finalGraph();
  std::set<int32_t> origins;
  for (size_t i = 0; i < runs.compiled.size(); ++i)
    if (runs.compiled[i] && g.hasValue(ValueId{int32_t(i)}))
      origins.insert(g.value(ValueId{int32_t(i)}).origin.index);
  keepOnly(runs.refs.eager.tensors, origins);
  if (runs.refs.exact) keepOnly(runs.refs.exact->tensors, origins);
  if (runs.refs.sample) keepOnly(runs.refs.sample->tensors, origins);
  const size_t boundary = bytesOf(runs.refs, runs.compiled);
  const std::string over = "the last compare's tensors take " + sizeText(all) +
                           ", over the inspector's budget of " + sizeText(tensorBudgetBytes);
  if (boundary <= tensorBudgetBytes) {
    keptNote_ = over + ", so only kernel-boundary tensors (" + sizeText(boundary) + ") are kept";
    runs_ = std::make_shared<const ComparedRuns>(std::move(runs));
    return;
  }
  keptNote_ = over + " (kernel boundaries alone take " + sizeText(boundary) + "), so none are kept";
}

Expected<InspectedTensor> Session::inspectTensor(const std::string& name) const {
  if (!runs_) {
    if (!keptNote_.empty()) return Status::error(keptNote_);
    return Status::error("no compare has run yet: the inspector shows the last compare's tensors");
  }
  const Graph& g = finalGraph();
  InspectedTensor t;
  t.name = name;
  ValueId origin;
  if (auto v = g.findValue(name)) {
    const Value& val = g.value(*v);
    origin = val.origin;
    if (val.producer.valid()) t.producer = g.node(val.producer).name;
    const auto& compiled = runs_->compiled;
    if (size_t(v->index) < compiled.size() && compiled[v->index]) {
      t.layout = val.layout.name();
      if (val.layout.blocked()) {
        auto logical = toLogical(*compiled[v->index], val.layout);
        if (!logical) return Status::error(logical.message(), "tensor '" + name + "'");
        t.compiled = std::make_shared<const TensorData>(std::move(*logical));
      } else {
        t.compiled = share(runs_, &*compiled[v->index]);
      }
    } else {
      t.note = "no compiled tensor: " + name + " is no kernel output the compiled run keeps";
    }
  } else if (auto o = model_->graph.findValue(name)) {
    origin = *o;
    t.note = "no compiled tensor: " + name + " is inside a kernel (not a kernel boundary)";
  }
  const ReferenceRuns& refs = runs_->refs;
  t.eager = share(runs_, refs.eager.find(origin));
  if (!t.eager && !t.compiled)
    return Status::error("no tensor named '" + name +
                         "' in the last compare (name a value of the graph, as the IR pane "
                         "or `fuselens-cli compare` shows it)");
  if (refs.exact) t.exact = share(runs_, refs.exact->find(origin));
  const TensorData* sample = refs.sample ? refs.sample->find(origin) : nullptr;
  if (t.exact && sample && t.eager && isFloat(t.eager->dtype)) {
    auto expected = expectedErrorMap(*t.exact, *sample, &*t.eager, t.eager->dtype);
    if (expected) t.expected = std::make_shared<const TensorData>(std::move(*expected));
  }
  if (!t.exact && t.note.empty())
    t.note = refs.note.empty() ? "no exact tensor: the compare used fixed tolerances" : refs.note;
  return t;
}

}  // namespace fuselens
