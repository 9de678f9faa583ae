#include "app/cli/compare_isolated.h"

#include <cstdio>
#include <iostream>

#include "app/cli/cli_common.h"

namespace fuselens::cli {
namespace {

void printTable(const IsolatedReport& rep) {
  std::printf("%-28s %-28s %12s %12s  %s\n", "kernel", "tensor", "isolated", "end to end",
              "verdict");
  for (const IsolatedRow& r : rep.rows) {
    std::string iso = r.verdict == IsolatedVerdict::Skipped ? "-" : formatDouble(r.isolated.maxAbs);
    std::string e2e = r.endToEnd ? formatDouble(r.endToEnd->maxAbs) : "-";
    std::string verdict = verdictName(r.verdict);
    if (r.verdict == IsolatedVerdict::Skipped) verdict += ": " + r.skipped;
    std::printf("%-28.28s %-28.28s %12s %12s  %s\n", r.kernel.c_str(), r.name.c_str(), iso.c_str(),
                e2e.c_str(), verdict.c_str());
  }
  std::printf("%s\n", isolatedVerdict(rep).c_str());
}

}  // namespace

int runIsolatedCompare(Session& session, const std::map<std::string, TensorData>& inputs,
                       const Tolerance& tol, bool json) {
  auto rep = session.compareIsolated(inputs, tol, terminalProgress(), interruptToken());
  if (!rep) return fail(rep.status());
  if (json)
    std::cout << isolatedJson(*rep, session) << "\n";
  else
    printTable(*rep);
  return rep->allWithin() ? kExitOk : kExitCheckFailed;
}

}  // namespace fuselens::cli
