// The options that say how a compiled run is judged against eager, shared by
// `compare` and `bisect`: fixed tolerances instead of rounding verdicts, the
// statistic judged, and planted faults.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "session/session.h"

namespace fuselens::cli {

struct CheckArgs {
  double atol = 1e-4, rtol = 1e-4;
  bool fixed = false;  // --atol or --rtol given
  std::string checkStat = "max";
  std::vector<std::string> perturb;  // KERNEL=EPS, repeatable
};

void addCheckOptions(CLI::App* cmd, const std::shared_ptr<CheckArgs>& args);

// The compare options the arguments ask for; plants the --perturb faults in
// `session`. An error sentence for a bad statistic or perturbation.
Expected<CompareOptions> applyCheckArgs(const CheckArgs& args, Session& session);

}  // namespace fuselens::cli
