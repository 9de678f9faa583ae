// Session::compareTaps: every name checked first (one sentence for a bad one,
// before any run), then the reference runs and the compiled run once, then
// each tap's group compiled as its tapped variant (session/tap_compare.h).
#include <algorithm>

#include "session/compared_runs.h"
#include "session/session.h"

namespace fuselens {

Expected<TapReport> Session::compareTaps(const std::vector<std::string>& names,
                                         const std::map<std::string, TensorData>& inputs,
                                         const CompareOptions& opts, const Progress& progress,
                                         const CancelToken& cancel) {
  if (!model_) return Status::error("no model is open");
  if (names.empty()) return Status::error("no tensor to tap was named");
  if (!compiled_) FL_RETURN_IF_ERROR(compile({}, progress, cancel));
  std::vector<TapTarget> targets;
  for (const std::string& name : names) {
    auto t = findTap(model_->graph, finalGraph(), compiled_->kernels(), name);
    if (!t) return t.status();
    targets.push_back(*t);
  }
  auto runs = compareRuns(inputs, opts, 0.05, 0.3, progress, cancel);
  if (!runs) return runs.status();
  TapReport rep;
  rep.options = opts;
  for (size_t i = 0; i < targets.size(); ++i) {
    if (cancel.cancelled()) return Status::error("cancelled");
    report(progress, 0.4 + 0.6 * double(i) / double(targets.size()), "tap " + names[i]);
    auto row = runTap(model_->graph, finalGraph(), compiled_->kernels(), targets[i], runs->refs,
                      runs->compiled, opts, compileOptions_,
                      perturbationFor(perturbations, compiled_->kernels()[targets[i].kernel].name),
                      cancel);
    if (!row) return row.status();
    rep.rows.push_back(std::move(*row));
  }
  report(progress, 1.0, "taps compared");
  if (!taps_) taps_ = TapReport{opts, {}};
  taps_->options = opts;
  for (const TapRow& r : rep.rows) {
    auto same = std::find_if(taps_->rows.begin(), taps_->rows.end(),
                             [&](const TapRow& t) { return t.row.name == r.row.name; });
    if (same != taps_->rows.end())
      *same = r;
    else
      taps_->rows.push_back(r);
  }
  return rep;
}

}  // namespace fuselens
