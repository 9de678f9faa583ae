#include "app/cli/compare_isolated.h"

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/cli/cli_common.h"

namespace fuselens::cli {
namespace {

nlohmann::json metricsJson(const TensorMetrics& m) {
  return {{"shape_match", m.shapeMatch}, {"max_abs", m.maxAbs}, {"max_rel", m.maxRel}, {"max_ulp", m.maxUlp},
          {"rmse", m.rmse}, {"cosine", m.cosine}, {"out_of_tolerance", m.outOfTolerance},
          {"nan_mismatch", m.nanMismatch}, {"within_tolerance", m.withinTolerance()}};
}

nlohmann::json toJson(const IsolatedReport& rep, const Session& s) {
  nlohmann::json rows = nlohmann::json::array();
  for (const IsolatedRow& r : rep.rows) {
    nlohmann::json row = {{"kernel", r.kernel}, {"node", r.node}, {"value", r.name},
                          {"verdict", verdictName(r.verdict)}};
    if (r.verdict == IsolatedVerdict::Skipped) row["skipped"] = r.skipped;
    else row["isolated"] = metricsJson(r.isolated);
    if (r.endToEnd) row["end_to_end"] = metricsJson(*r.endToEnd);
    rows.push_back(std::move(row));
  }
  const IsolatedRow* first = rep.firstKernelDiffering();
  return {{"model", s.modelPath()}, {"pipeline", s.pipeline()}, {"mode", "isolated"},
          {"atol", rep.tolerance.atol}, {"rtol", rep.tolerance.rtol},
          {"all_within_tolerance", rep.allWithin()},
          {"first_kernel_differing", first ? nlohmann::json(first->kernel) : nlohmann::json()},
          {"tensors", rows}};
}

void printTable(const IsolatedReport& rep) {
  std::printf("%-28s %-28s %12s %12s  %s\n", "kernel", "tensor", "isolated", "end to end", "verdict");
  for (const IsolatedRow& r : rep.rows) {
    std::string iso = r.verdict == IsolatedVerdict::Skipped ? "-" : formatDouble(r.isolated.maxAbs);
    std::string e2e = r.endToEnd ? formatDouble(r.endToEnd->maxAbs) : "-";
    std::string verdict = verdictName(r.verdict);
    if (r.verdict == IsolatedVerdict::Skipped) verdict += ": " + r.skipped;
    std::printf("%-28.28s %-28.28s %12s %12s  %s\n", r.kernel.c_str(), r.name.c_str(), iso.c_str(),
                e2e.c_str(), verdict.c_str());
  }
  if (const IsolatedRow* first = rep.firstKernelDiffering())
    std::printf("FAIL: kernel %s is the first that differs when fed eager inputs (%s, max abs %s)\n",
                first->kernel.c_str(), first->name.c_str(), formatDouble(first->isolated.maxAbs).c_str());
  else if (!rep.allWithin())
    std::printf("FAIL: every kernel is within tolerance alone; the end-to-end error accumulated upstream\n");
  else
    std::printf("PASS: every kernel within tolerance when fed eager inputs (atol %g, rtol %g)\n",
                rep.tolerance.atol, rep.tolerance.rtol);
}

}  // namespace

int runIsolatedCompare(Session& session, const std::map<std::string, TensorData>& inputs,
                       const Tolerance& tol, bool json) {
  auto rep = session.compareIsolated(inputs, tol, terminalProgress(), interruptToken());
  if (!rep) return fail(rep.status());
  if (json) std::cout << toJson(*rep, session).dump(2) << "\n";
  else printTable(*rep);
  return rep->allWithin() ? kExitOk : kExitCheckFailed;
}

}  // namespace fuselens::cli
