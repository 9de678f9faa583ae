#include "app/cli/compare_isolated.h"

#include <cstdio>
#include <iostream>

#include "app/cli/cli_common.h"

namespace fuselens::cli {
namespace {

void printTable(const IsolatedReport& rep, const Session& s) {
  if (std::string line = precisionLine(s.pipeline()); !line.empty())
    std::printf("%s\n", line.c_str());
  const bool rounding = rep.options.rounding();
  // Rounding mode shows each error over its expected error; fixed mode the max abs error.
  std::printf("%-28s %-28s %12s %12s  %s\n", "kernel", "tensor",
              rounding ? "own/expected" : "isolated", rounding ? "e2e/expected" : "end to end",
              "verdict");
  for (const IsolatedRow& r : rep.rows) {
    std::string iso = "-", e2e = "-";
    if (r.verdict != IsolatedVerdict::Skipped)
      iso = r.own ? formatDouble(r.own->ratio) : formatDouble(r.isolated.maxAbs);
    if (r.carried)
      e2e = formatDouble(r.carried->ratio);
    else if (r.endToEnd && !rounding)
      e2e = formatDouble(r.endToEnd->maxAbs);
    std::string verdict = verdictName(r.verdict);
    if (r.verdict == IsolatedVerdict::Skipped) verdict += ": " + r.skipped;
    if (r.verdict == IsolatedVerdict::KernelDiffers && r.own) verdict += ": " + verdictText(*r.own);
    std::printf("%-28.28s %-28.28s %12s %12s  %s\n", r.kernel.c_str(), r.name.c_str(), iso.c_str(),
                e2e.c_str(), verdict.c_str());
  }
  std::printf("%s\n", isolatedVerdict(rep).c_str());
}

}  // namespace

int runIsolatedCompare(Session& session, const std::map<std::string, TensorData>& inputs,
                       const CompareOptions& opts, bool json) {
  auto rep = session.compareIsolated(inputs, opts, terminalProgress(), interruptToken());
  if (!rep) return fail(rep.status());
  if (json)
    std::cout << isolatedJson(*rep, session) << "\n";
  else
    printTable(*rep, session);
  return rep->allWithin() ? kExitOk : kExitCheckFailed;
}

}  // namespace fuselens::cli
