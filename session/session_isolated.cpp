// Session::compareIsolated: the eager run, the end-to-end compiled run, then
// every kernel alone (session/isolated_compare.cpp).
#include "session/session.h"

namespace fuselens {

Expected<IsolatedReport> Session::compareIsolated(const std::map<std::string, TensorData>& inputs,
                                                  const Tolerance& tol, const Progress& progress,
                                                  const CancelToken& cancel) {
  if (!model_) return Expected<IsolatedReport>::error("no model is open");
  if (!compiled_) FL_RETURN_IF_ERROR(compile({}, progress, cancel));
  report(progress, 0.05, "eager reference run");
  auto eager = runEager(model_->graph, inputs, {}, {}, cancel);
  if (!eager) return eager.status();
  report(progress, 0.1, "compiled run");
  auto compiled = compiled_->run(inputs, cancel);
  if (!compiled) return compiled.status();
  auto scaled = [&progress](double f, const std::string& stage) {
    report(progress, 0.1 + 0.9 * f, stage);
  };
  auto rep = fuselens::compareIsolated(finalGraph(), compiled_->kernels(), *eager, &*compiled, tol,
                                       compileOptions_, scaled, cancel);
  if (rep) isolated_ = *rep;
  return rep;
}

}  // namespace fuselens
