#include "app/cli/check_options.h"

namespace fuselens::cli {

void addCheckOptions(CLI::App* cmd, const std::shared_ptr<CheckArgs>& args) {
  cmd->add_option("--atol", args->atol,
                  "Absolute tolerance: judge by fixed tolerances instead of the expected rounding "
                  "error")
      ->capture_default_str()
      ->each([args](const std::string&) { args->fixed = true; });
  cmd->add_option("--rtol", args->rtol, "Relative tolerance (as --atol, fixed tolerances)")
      ->capture_default_str()
      ->each([args](const std::string&) { args->fixed = true; });
  cmd->add_option("--check-stat", args->checkStat,
                  "What is judged over a tensor's elements: max, mean, median or quantile:Q")
      ->capture_default_str();
  cmd->add_option("--perturb", args->perturb,
                  "Fault injection: add EPS times the output's RMS to kernel KERNEL's output "
                  "(KERNEL=EPS, KERNEL a name or id such as k3; repeatable)");
}

Expected<CompareOptions> applyCheckArgs(const CheckArgs& a, Session& session) {
  auto stat = ErrorStat::parse(a.checkStat);
  if (!stat) return stat.status();
  CompareOptions opts;
  if (a.fixed) opts = Tolerance{a.atol, a.rtol};
  opts.stat = *stat;
  for (const std::string& p : a.perturb) {
    auto parsed = parsePerturbation(p);
    if (!parsed) return parsed.status();
    session.perturbations[parsed->first] = parsed->second;
  }
  return opts;
}

}  // namespace fuselens::cli
