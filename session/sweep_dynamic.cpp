#include "session/sweep_dynamic.h"

#include <chrono>

#include "codegen/kernel_plan.h"
#include "codegen/symbolic/symbolic_plan.h"
#include "session/session.h"

namespace fuselens {
Expected<SymbolicTableReport> symbolicKernelsFor(const Graph& model, const std::string& label,
                                                 const std::string& dim,
                                                 const std::string& pipeline,
                                                 const CancelToken& cancel) {
  auto t0 = std::chrono::steady_clock::now();
  SymbolicTableReport rep;
  std::vector<Session> sessions;
  std::vector<KernelPlan> plans;
  const std::vector<int64_t>& lengths = symbolicSampleLengths();
  sessions.reserve(lengths.size());
  plans.reserve(lengths.size());
  CompileOptions opts;
  opts.schedule = symbolicSchedule();
  for (int64_t v : lengths) {
    if (cancel.cancelled()) return Status::error("cancelled", "--dynamic");
    Session s;
    if (!s.open(Graph(model), label) || !s.bindDims({{dim, v}}) ||
        !s.optimize(pipeline, {}, cancel))
      continue;
    auto plan = planKernels(s.finalGraph(), opts, {}, cancel);
    if (!plan) continue;
    sessions.push_back(std::move(s));
    plans.push_back(std::move(*plan));
    rep.samples.push_back(v);
  }
  if (plans.size() < 3)
    return Status::error("the model could be lowered at fewer than 3 of the sample lengths " +
                             std::to_string(lengths.front()) + ".." +
                             std::to_string(lengths.back()) + " of " + dim,
                         "--dynamic");
  std::vector<std::pair<const Graph*, const KernelPlan*>> samples;
  for (size_t i = 0; i < plans.size(); ++i)
    samples.emplace_back(&sessions[i].finalGraph(), &plans[i]);
  auto table = std::make_shared<SymbolicKernels>(buildSymbolicKernels(samples));
  table->sampleValues = rep.samples;
  rep.symbolic = table->kernels.size();
  rep.refused = table->refused.size();
  for (const auto& [id, why] : table->refused)
    rep.reasons.push_back(id.substr(0, id.find('|')) + ": " + why);
  rep.table = std::move(table);
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rep;
}

}  // namespace fuselens
