// `run --sweep`: the flags of a sweep over a symbolic dim, and the command
// that parses them, runs session/shape_sweep.h and prints its report.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "app/cli/cli_common.h"

namespace fuselens::cli {

struct SweepArgs {
  std::string sweep;    // "seq=1:300:37" or "seq=1,2,7"; empty: no sweep
  std::string buckets;  // "seq=32,64", "seq=pow2", "seq=step:32"; empty: per shape
  bool checkEager = false;
  bool padCheck = false;
  bool dynamic = false;
};

void addSweepOptions(CLI::App* cmd, SweepArgs& args);
// Runs the sweep; `engine` must be cpu. Exit 1 when a run differs from eager.
int runSweepCommand(const SweepArgs& args, const std::string& model, const std::string& engine,
                    const std::string& passes, const InputArgs& inputs, bool json);

}  // namespace fuselens::cli
