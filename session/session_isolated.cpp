// Session::compareIsolated: the reference runs (with the f64 and f32-summing
// ones for rounding verdicts), the end-to-end compiled run, then every kernel
// alone (session/isolated_compare.cpp).
#include "session/session.h"

namespace fuselens {

Expected<IsolatedReport> Session::compareIsolated(const std::map<std::string, TensorData>& inputs,
                                                  const CompareOptions& opts,
                                                  const Progress& progress,
                                                  const CancelToken& cancel) {
  if (!model_) return Expected<IsolatedReport>::error("no model is open");
  if (!compiled_) FL_RETURN_IF_ERROR(compile({}, progress, cancel));
  report(progress, 0.05, "eager reference runs");
  auto refs = runReferences(model_->graph, inputs, opts.rounding(), cancel);
  if (!refs) return refs.status();
  report(progress, 0.1, "compiled run");
  FL_RETURN_IF_ERROR(checkPerturbations(perturbations, compiled_->kernels()));
  std::optional<ScopedAfterKernelHook> faults;
  if (!perturbations.empty()) faults.emplace(perturbationHook(perturbations));
  auto compiled = compiled_->run(inputs, cancel);
  if (!compiled) return compiled.status();
  faults.reset();
  auto scaled = [&progress](double f, const std::string& stage) {
    report(progress, 0.1 + 0.9 * f, stage);
  };
  RoundingReferences rounding{model_->graph, *refs};
  auto rep =
      fuselens::compareIsolated(finalGraph(), compiled_->kernels(), refs->eager, &*compiled, opts,
                                compileOptions_, scaled, cancel, &rounding, &perturbations);
  if (rep) isolated_ = *rep;
  return rep;
}

}  // namespace fuselens
