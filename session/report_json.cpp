// JSON writers of the compare, isolated and explain reports.
#include "session/report_json.h"

#include <nlohmann/json.hpp>

#include "session/session.h"

namespace fuselens {
namespace {

nlohmann::json metricsJson(const TensorMetrics& m) {
  return {{"shape_match", m.shapeMatch},
          {"max_abs", m.maxAbs},
          {"max_rel", m.maxRel},
          {"max_ulp", m.maxUlp},
          {"rmse", m.rmse},
          {"cosine", m.cosine},
          {"out_of_tolerance", m.outOfTolerance},
          {"nan_mismatch", m.nanMismatch},
          {"within_tolerance", m.withinTolerance()}};
}

nlohmann::json orNull(const std::string& s) {
  return s.empty() ? nlohmann::json() : nlohmann::json(s);
}

}  // namespace

std::string compareJson(const CompareReport& rep, const Session& s) {
  nlohmann::json rows = nlohmann::json::array();
  for (const CompareRow& r : rep.rows) {
    const TensorMetrics& m = r.metrics;
    rows.push_back({{"value", r.name},
                    {"producer", r.producer},
                    {"graph_output", r.isGraphOutput},
                    {"shape_match", m.shapeMatch},
                    {"count", m.count},
                    {"max_abs", m.maxAbs},
                    {"max_rel", m.maxRel},
                    {"max_ulp", m.maxUlp},
                    {"mean_abs", m.meanAbs},
                    {"rmse", m.rmse},
                    {"cosine", m.cosine},
                    {"nan_mismatch", m.nanMismatch},
                    {"out_of_tolerance", m.outOfTolerance},
                    {"worst_index", m.worstIndex},
                    {"within_tolerance", m.withinTolerance()},
                    {"fallback", r.fallback},
                    {"status", r.fallback            ? kFallbackLabel
                               : m.withinTolerance() ? "ok"
                                                     : "out"}});
  }
  GraphStats st = graphStats(s.finalGraph());
  const CompareRow* first = rep.firstDivergent();
  nlohmann::json out = {{"model", s.modelPath()},
                        {"pipeline", s.pipeline()},
                        {"atol", rep.tolerance.atol},
                        {"rtol", rep.tolerance.rtol},
                        {"fused_groups", st.fusedGroups},
                        {"kernels", s.compiled() ? s.compiled()->kernels().size() : st.kernels},
                        {"all_within_tolerance", rep.allWithin()},
                        {"fallback_tensors", rep.fallbackCount()},
                        {"first_divergent", first ? nlohmann::json(first->name) : nlohmann::json()},
                        {"verdict", rep.verdict()},
                        {"tensors", rows}};
  return out.dump(2);
}

std::string isolatedJson(const IsolatedReport& rep, const Session& s) {
  nlohmann::json rows = nlohmann::json::array();
  for (const IsolatedRow& r : rep.rows) {
    nlohmann::json row = {{"kernel", r.kernel},
                          {"node", r.node},
                          {"value", r.name},
                          {"verdict", verdictName(r.verdict)}};
    if (r.verdict == IsolatedVerdict::Skipped)
      row["skipped"] = r.skipped;
    else
      row["isolated"] = metricsJson(r.isolated);
    if (r.endToEnd) row["end_to_end"] = metricsJson(*r.endToEnd);
    rows.push_back(std::move(row));
  }
  const IsolatedRow* first = rep.firstKernelDiffering();
  nlohmann::json out = {
      {"model", s.modelPath()},
      {"pipeline", s.pipeline()},
      {"mode", "isolated"},
      {"atol", rep.tolerance.atol},
      {"rtol", rep.tolerance.rtol},
      {"all_within_tolerance", rep.allWithin()},
      {"first_kernel_differing", first ? nlohmann::json(first->kernel) : nlohmann::json()},
      {"verdict", isolatedVerdict(rep)},
      {"tensors", rows}};
  return out.dump(2);
}

std::string explainJson(const ExplainReport& rep, const Session& s) {
  nlohmann::json rows = nlohmann::json::array(), bounds = nlohmann::json::array();
  for (const FusionDecision& d : rep.decisions)
    rows.push_back({{"pass", d.passName},
                    {"producer", d.producerName},
                    {"producer_op", d.producerOp},
                    {"consumer", d.consumerName},
                    {"consumer_op", d.consumerOp},
                    {"accepted", d.accepted},
                    {"rule", d.ruleId()},
                    {"reason", d.reason},
                    {"hint", d.hint},
                    {"group", d.group >= 0 ? nlohmann::json(d.group) : nlohmann::json()}});
  for (const ExplainBoundary& b : rep.boundaries)
    bounds.push_back({{"producer", b.producer},
                      {"consumer", b.consumer},
                      {"value", b.value},
                      {"explained", b.explained},
                      {"rule", b.rule},
                      {"reason", b.reason},
                      {"hint", b.hint}});
  nlohmann::json out = {{"model", s.modelPath()},
                        {"pipeline", s.pipeline()},
                        {"decisions", rows},
                        {"boundaries", bounds},
                        {"unexplained_boundaries", rep.unexplained},
                        {"summary", rep.summary()}};
  if (!rep.removed.empty()) out["removed"] = orNull(rep.removed);
  return out.dump(2);
}

}  // namespace fuselens
