// Session::compareIsolated: the reference runs (with the f64 and f32-summing
// ones for rounding verdicts), the end-to-end compiled run, then every kernel
// alone (session/isolated_compare.cpp). The reference and end-to-end runs are
// kept for the tensor inspector as a plain compare's are.
#include "session/compared_runs.h"
#include "session/session.h"

namespace fuselens {

Expected<IsolatedReport> Session::compareIsolated(const std::map<std::string, TensorData>& inputs,
                                                  const CompareOptions& opts,
                                                  const Progress& progress,
                                                  const CancelToken& cancel) {
  auto runs = compareRuns(inputs, opts, 0.05, 0.1, progress, cancel);
  if (!runs) return runs.status();
  const ReferenceRuns* refs = &runs->refs;
  const auto* compiled = &runs->compiled;
  auto scaled = [&progress](double f, const std::string& stage) {
    report(progress, 0.1 + 0.9 * f, stage);
  };
  RoundingReferences rounding{model_->graph, *refs};
  auto rep =
      fuselens::compareIsolated(finalGraph(), compiled_->kernels(), refs->eager, &*compiled, opts,
                                compileOptions_, scaled, cancel, &rounding, &perturbations);
  if (!rep) return rep;
  isolated_ = *rep;
  // The inspector then shows this compare's end-to-end run, not an older one's.
  keepRuns(std::move(*runs));
  return rep;
}

}  // namespace fuselens
