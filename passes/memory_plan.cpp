// memory-plan (see memory_plan.h): asks the one buffer planner
// (core/plan/buffer_plan.h) for the plan of this graph's run and reports it.
#include "passes/memory_plan.h"

#include <map>

#include "core/ops/registry.h"
#include "core/plan/buffer_plan.h"

namespace fuselens {
namespace {

std::string ref(const Graph& g, ValueId v) { return "%" + g.value(v).name; }

// "%a", "%c (in place of %a)", "%r (alias of %a)"
std::string holder(const Graph& g, const BufferPlan::Entry& e) {
  using How = BufferPlan::Entry::How;
  if (e.how == How::InPlace) return ref(g, e.value) + " (in place of " + ref(g, e.over) + ")";
  if (e.how == How::Alias) return ref(g, e.value) + " (alias of " + ref(g, e.over) + ")";
  return ref(g, e.value);
}

}  // namespace

PassResult MemoryPlanPass::run(Graph& g, PassContext& ctx) {
  if (ctx.cancel.cancelled()) return PassResult::failed(Status::error("cancelled", "memory-plan"));
  auto steps = runStepsOf(g);
  if (!steps) return PassResult::failed(Status::error(steps.message(), "memory-plan"));
  auto plan =
      std::make_shared<BufferPlan>(planBuffers(g, *steps, {opts_.alignment, opts_.inPlace}));

  PassResult r;
  for (ValueId v : plan->skipped)
    r.diagnostics.push_back(Diagnostic{Severity::Note, describeNode(g.node(g.value(v).producer)),
                                       "value " + ref(g, v) + " has the dynamic shape " +
                                           g.value(v).type.str() +
                                           "; not planned (it needs a run-time allocation)"});
  std::map<int, std::string> lists;
  int64_t aliases = 0, inPlace = 0;
  for (const auto& e : plan->values) {
    std::string& list = lists[e.buffer];
    list += (list.empty() ? "" : ", ") + holder(g, e);
    aliases += e.how == BufferPlan::Entry::How::Alias;
    inPlace += e.how == BufferPlan::Entry::How::InPlace;
  }
  for (auto& [b, list] : lists)
    r.diagnostics.push_back(Diagnostic{Severity::Note, "graph @" + g.name,
                                       "buffer " + std::to_string(b) + " (" +
                                           std::to_string(plan->bufferBytes[size_t(b)]) +
                                           " bytes): " + list});
  r.stats["values planned"] = int64_t(plan->values.size()) - aliases;
  r.stats["aliases"] = aliases;
  r.stats["buffers"] = int64_t(plan->bufferBytes.size());
  r.stats["in-place"] = inPlace;
  r.stats["values skipped (dynamic shape)"] = int64_t(plan->skipped.size());
  r.stats["peak bytes before"] = plan->unsharedBytes;
  r.stats["peak bytes after"] = plan->arenaBytes;
  r.stats["peak live bytes"] = plan->peakLiveBytes;
  ctx.bufferPlan = std::move(plan);
  return r;
}

}  // namespace fuselens
