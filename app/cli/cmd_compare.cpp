// `fuselens-cli compare`: compile, run compiled and eager on the same inputs,
// and compare every kernel-boundary tensor; non-zero exit when any is out of
// tolerance.
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/cli/cli_common.h"
#include "app/cli/commands.h"
#include "app/cli/compare_isolated.h"

namespace fuselens::cli {
namespace {

struct CompareArgs {
  std::string model;
  std::string passes = defaultPipeline();
  InputArgs inputs;
  double atol = 1e-4, rtol = 1e-4;
  bool json = false;
  bool isolated = false;
  bool noFallback = false;
};

nlohmann::json toJson(const CompareReport& rep, const Session& s) {
  nlohmann::json rows = nlohmann::json::array();
  for (const CompareRow& r : rep.rows) {
    const TensorMetrics& m = r.metrics;
    rows.push_back({{"value", r.name}, {"producer", r.producer}, {"graph_output", r.isGraphOutput},
                    {"shape_match", m.shapeMatch}, {"count", m.count}, {"max_abs", m.maxAbs},
                    {"max_rel", m.maxRel}, {"max_ulp", m.maxUlp}, {"mean_abs", m.meanAbs}, {"rmse", m.rmse}, {"cosine", m.cosine},
                    {"nan_mismatch", m.nanMismatch}, {"out_of_tolerance", m.outOfTolerance},
                    {"worst_index", m.worstIndex}, {"within_tolerance", m.withinTolerance()},
                    {"fallback", r.fallback},
                    {"status", r.fallback ? kFallbackLabel : m.withinTolerance() ? "ok" : "out"}});
  }
  GraphStats st = graphStats(s.finalGraph());
  const CompareRow* first = rep.firstDivergent();
  return {{"model", s.modelPath()}, {"pipeline", s.pipeline()}, {"atol", rep.tolerance.atol},
          {"rtol", rep.tolerance.rtol}, {"fused_groups", st.fusedGroups},
          {"kernels", s.compiled()->kernels().size()}, {"all_within_tolerance", rep.allWithin()},
          {"fallback_tensors", rep.fallbackCount()},
          {"first_divergent", first ? nlohmann::json(first->name) : nlohmann::json()}, {"tensors", rows}};
}

void printTable(const CompareReport& rep, const Session& s) {
  GraphStats st = graphStats(s.finalGraph());
  std::printf("pipeline %s: %zu fused group%s, %zu kernels\n", s.pipeline().c_str(), st.fusedGroups,
              st.fusedGroups == 1 ? "" : "s", s.compiled()->kernels().size());
  std::printf("%-32s %-20s %10s %10s %10s %9s  %s\n", "tensor", "producer", "max abs", "max rel", "rmse",
              "cosine", "status");
  for (const CompareRow& r : rep.rows) {
    const TensorMetrics& m = r.metrics;
    // A fallback tensor is the eager kernel's own output: never an "ok".
    std::string status = r.fallback ? "fallback"
                         : !m.shapeMatch ? "SHAPE MISMATCH"
                         : m.withinTolerance() ? "ok"
                                               : "OUT (" + std::to_string(m.outOfTolerance + m.nanMismatch) + " elems)";
    std::printf("%-32.32s %-20.20s %10s %10s %10s %9.6f  %s%s\n", r.name.c_str(), r.producer.c_str(),
                formatDouble(m.maxAbs).c_str(), formatDouble(m.maxRel).c_str(), formatDouble(m.rmse).c_str(),
                m.cosine, status.c_str(), r.isGraphOutput ? " (output)" : "");
  }
  if (const CompareRow* first = rep.firstDivergent())
    std::printf("FAIL: %s (from %s) is the first tensor out of tolerance (atol %g, rtol %g)\n", first->name.c_str(),
                first->producer.c_str(), rep.tolerance.atol, rep.tolerance.rtol);
  else
    std::printf("PASS: %zu tensors within tolerance (atol %g, rtol %g)\n",
                rep.rows.size() - rep.fallbackCount(), rep.tolerance.atol, rep.tolerance.rtol);
  if (size_t n = rep.fallbackCount())
    std::printf("NOTE: %zu tensor%s %s, not compared: kernels %s\n", n, n == 1 ? "" : "s",
                kFallbackLabel, fallbackKernelList(s.compiled()->kernels()).c_str());
}

int runCompare(const CompareArgs& a) {
  Session session;
  if (Status s = openAndOptimize(session, a.model, a.passes, a.inputs.dims, a.inputs.shapes); !s) return fail(s);
  auto inputs = loadInputs(session, a.inputs);
  if (!inputs) return fail(inputs.status());
  if (Status s = fitToInputs(session, *inputs, a.passes); !s) return fail(s);
  if (a.noFallback) {
    CompileOptions opts;
    opts.fallback = false;
    if (Status st = session.compile(opts, terminalProgress(), interruptToken()); !st) return fail(st);
  }
  if (a.isolated) return runIsolatedCompare(session, *inputs, Tolerance{a.atol, a.rtol}, a.json);
  auto rep = session.compare(*inputs, Tolerance{a.atol, a.rtol}, terminalProgress(), interruptToken());
  if (!rep) return fail(rep.status());
  if (a.json) std::cout << toJson(*rep, session).dump(2) << "\n";
  else printTable(*rep, session);
  return rep->allWithin() ? kExitOk : kExitCheckFailed;
}

}  // namespace

void addCompareCommand(CLI::App& app, int& exitCode) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* cmd = app.add_subcommand(
      "compare", "Compare the compiled run with the eager reference, tensor by tensor (exit 1 when out of tolerance)");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  cmd->add_option("--passes", args->passes, "Pipeline string")->capture_default_str();
  addInputOptions(cmd, args->inputs);
  cmd->add_option("--atol", args->atol, "Absolute tolerance")->capture_default_str();
  cmd->add_option("--rtol", args->rtol, "Relative tolerance")->capture_default_str();
  cmd->add_flag("--json", args->json, "Print a JSON report");
  cmd->add_flag("--no-fallback", args->noFallback,
                "Fail on ops without code generation instead of running them as the reference fallback");
  cmd->add_flag("--isolated", args->isolated,
                "Also compile every kernel alone and feed it eager inputs: tells a wrong kernel from error accumulated upstream");
  cmd->callback([args, &exitCode] { exitCode = runCompare(*args); });
}

}  // namespace fuselens::cli
