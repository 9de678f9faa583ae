// JSON writers of the compare, isolated and explain reports.
#include "session/report_json.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "session/pipeline_choice.h"
#include "session/session.h"
#include "session/shape_sweep.h"

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

nlohmann::json roundingJson(const RoundingCheck& c) {
  return {{"expected_error", c.expected},
          {"actual_error", c.actual},
          {"error_ratio", std::isfinite(c.ratio) ? nlohmann::json(c.ratio) : nlohmann::json()},
          {"cosine", c.cosine},
          {"nan_inf_mismatch", c.nonFiniteMismatch},
          {"sign_flips", c.signFlips},
          {"integer_mismatch", c.integerMismatch},
          {"verdict", verdictWord(c.verdict)},
          {"verdict_text", verdictText(c)}};
}

nlohmann::json optionsJson(const CompareOptions& o) {
  return {{"check", o.rounding() ? "rounding" : "fixed"},
          {"check_stat", o.stat.str()},
          {"margin", o.margin},
          {"atol", o.tolerance.atol},
          {"rtol", o.tolerance.rtol}};
}

nlohmann::json orNull(const std::string& s) {
  return s.empty() ? nlohmann::json() : nlohmann::json(s);
}

nlohmann::json rowJson(const CompareRow& r) {
  const TensorMetrics& m = r.metrics;
  nlohmann::json row = {{"value", r.name},
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
                        {"status", r.fallback     ? kFallbackLabel
                                   : r.judgedOk() ? "ok"
                                                  : "out"},
                        {"verdict", r.fallback ? kFallbackLabel : verdictWord(r.verdict)},
                        {"verdict_text", rowStatus(r)}};
  if (r.rounding) {
    row["expected_error"] = r.rounding->expected;
    row["rounding"] = roundingJson(*r.rounding);
  }
  return row;
}

}  // namespace

std::string compareJson(const CompareReport& rep, const Session& s, const TapReport* taps) {
  nlohmann::json rows = nlohmann::json::array();
  for (const CompareRow& r : rep.rows) rows.push_back(rowJson(r));
  GraphStats st = graphStats(s.finalGraph());
  const CompareRow* first = rep.firstDivergent();
  nlohmann::json out = {{"model", s.modelPath()},
                        {"pipeline", s.pipeline()},
                        {"precision", precisionOf(s.pipeline())},
                        {"atol", rep.options.tolerance.atol},
                        {"rtol", rep.options.tolerance.rtol},
                        {"options", optionsJson(rep.options)},
                        {"reference_note", orNull(rep.referenceNote)},
                        {"fused_groups", st.fusedGroups},
                        {"kernels", s.compiled() ? s.compiled()->kernels().size() : st.kernels},
                        {"all_within_tolerance", rep.allWithin()},
                        {"passed", rep.allWithin()},
                        {"fallback_tensors", rep.fallbackCount()},
                        {"first_divergent", first ? nlohmann::json(first->name) : nlohmann::json()},
                        {"verdict", rep.verdict()},
                        {"tensors", rows}};
  if (taps) {
    nlohmann::json tapRows = nlohmann::json::array();
    for (const TapRow& t : taps->rows) {
      nlohmann::json row = rowJson(t.row);
      row["name"] = t.row.name;
      row["kernel"] = t.kernel;
      row["group"] = t.group;
      row["node"] = t.node;
      row["outputs_identical"] = t.outputsIdentical;
      if (!t.outputsIdentical) row["outputs_note"] = t.outputsNote;
      if (!t.ok()) row["status"] = "out";
      tapRows.push_back(std::move(row));
    }
    out["taps"] = tapRows;
    out["taps_verdict"] = taps->verdict();
    out["passed"] = rep.allWithin() && taps->allWithin();
  }
  return out.dump(2);
}

std::string isolatedJson(const IsolatedReport& rep, const Session& s) {
  nlohmann::json rows = nlohmann::json::array(), kernels = nlohmann::json::array();
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
    if (r.own) row["own"] = roundingJson(*r.own);
    if (r.carried) row["carried"] = roundingJson(*r.carried);
    rows.push_back(std::move(row));
  }
  for (const IsolatedKernel& k : rep.kernels) {
    nlohmann::json outs = nlohmann::json::array();
    for (size_t i : k.rows) {
      const IsolatedRow& r = rep.rows[i];
      nlohmann::json o = {{"value", r.name}, {"metrics", metricsJson(r.isolated)}};
      if (r.own) {
        o["expected_error"] = r.own->expected;
        o["own"] = roundingJson(*r.own);
      }
      if (r.carried) o["carried"] = roundingJson(*r.carried);
      if (r.verdict == IsolatedVerdict::Skipped) o["skipped"] = r.skipped;
      outs.push_back(std::move(o));
    }
    kernels.push_back({{"id", k.id},
                       {"members", k.members},
                       {"verdict", verdictName(rep.kernelVerdict(k))},
                       {"outputs", outs}});
  }
  const IsolatedRow* first = rep.firstKernelDiffering();
  nlohmann::json out = {
      {"model", s.modelPath()},
      {"pipeline", s.pipeline()},
      {"precision", precisionOf(s.pipeline())},
      {"mode", "isolated"},
      {"atol", rep.options.tolerance.atol},
      {"rtol", rep.options.tolerance.rtol},
      {"options", optionsJson(rep.options)},
      {"all_within_tolerance", rep.allWithin()},
      {"passed", rep.allWithin()},
      {"first_kernel_differing", first ? nlohmann::json(first->kernel) : nlohmann::json()},
      {"first_divergent", first ? nlohmann::json(first->kernel) : nlohmann::json()},
      {"verdict", isolatedVerdict(rep)},
      {"kernels", kernels},
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

std::string bisectJson(const BisectReport& rep) {
  static const char* const outcomes[] = {"within", "found", "not_fusion", "at_import"};
  nlohmann::json trials = nlohmann::json::array();
  for (const BisectTrial& t : rep.trials)
    trials.push_back(
        {{"what", t.what},
         {"kernels", t.kernels},
         {"within", t.within},
         {"worst_output", t.worst},
         {"status", t.status},
         {"error_ratio", std::isfinite(t.ratio) ? nlohmann::json(t.ratio) : nlohmann::json()}});
  nlohmann::json out = {
      {"by", rep.by == BisectBy::Groups ? "groups" : "passes"},
      {"output", rep.output.empty() ? nlohmann::json() : nlohmann::json(rep.output)},
      {"outcome", outcomes[int(rep.outcome)]},
      {"verdict", rep.verdict()},
      {"compiles", rep.trials.size()},
      {"trials", trials}};
  if (rep.by == BisectBy::Groups) {
    out["groups"] = rep.groups;
    out["kernels"] = rep.kernels;
  } else {
    out["pass"] = rep.pass.empty() ? nlohmann::json() : nlohmann::json(rep.pass);
    out["pass_step"] = rep.passStep < 0 ? nlohmann::json() : nlohmann::json(rep.passStep);
  }
  return out.dump(2);
}

namespace {

nlohmann::json optionalBool(const std::optional<bool>& b) {
  return b ? nlohmann::json(*b) : nlohmann::json();
}

}  // namespace

std::string sweepJson(const SweepReport& r) {
  nlohmann::json rows = nlohmann::json::array();
  for (const SweepRun& run : r.runs)
    rows.push_back({{"value", run.value},
                    {"bucket", run.bucket},
                    {"compiled", run.compiled},
                    {"cache_hit", run.cacheHit},
                    {"compile_seconds", run.compileSeconds},
                    {"first_compile_seconds", run.firstCompileSeconds},
                    {"run_seconds", run.runSeconds},
                    {"elements", run.elements},
                    {"padded_elements", run.paddedElements},
                    {"kernels", run.kernels},
                    {"kernel_compiles", run.kernelCompiles},
                    {"symbolic_kernels", run.symbolicKernels},
                    {"verified_symbolic_kernels", run.verifiedSymbolic},
                    {"match", optionalBool(run.match)},
                    {"verdict", run.verdict},
                    {"pad_match", optionalBool(run.padMatch)},
                    {"pad_verdict", run.padVerdict}});
  nlohmann::json j = {{"dim", r.dim},
                      {"mode", r.mode()},
                      {"buckets", r.buckets},
                      {"runs", r.runs.size()},
                      {"compiles", r.compiles},
                      {"cache_hits", r.cacheHits},
                      {"cache_misses", r.compiles - r.cacheHits},
                      {"cache_hits_first_compile_seconds", r.firstCompileSeconds},
                      {"compile_seconds", r.compileSeconds},
                      {"run_seconds", r.runSeconds},
                      {"padding_waste", r.paddingWaste},
                      {"kernel_compiles", r.kernelCompiles},
                      {"symbolic_kernels", r.symbolicKernels},
                      {"per_shape_kernels", r.perShapeKernels},
                      {"symbolic_samples", r.symbolicSamples},
                      {"symbolic_seconds", r.symbolicSeconds},
                      {"all_match", optionalBool(r.allMatch)},
                      {"cache_dir", r.cacheDir},
                      {"notes", r.notes},
                      {"summary", r.summary()},
                      {"rows", rows}};
  return j.dump(2);
}

}  // namespace fuselens
