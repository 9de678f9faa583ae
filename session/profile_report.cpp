// The profile report's three views: the table, JSON, and a Chrome trace of the
// last timed run (one complete event per kernel, gaps are the executor's).
#include "session/profile_report.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace fuselens {
namespace {

std::string format(const char* fmt, auto... args) {
  char buf[512];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

}  // namespace

std::string ProfileReport::header() const {
  std::string s = format("profile: %s, %zu kernels, %d runs, %d thread%s\n", model.c_str(),
                         kernels.size(), runs, threads, threads == 1 ? "" : "s");
  s += format("machine: FMA peak %.1f GFLOP/s, copy %.1f GB/s (ridge %.1f flop/byte)\n",
              fmaPeakGflops, copyGBps, copyGBps > 0 ? fmaPeakGflops / copyGBps : 0.0);
  s += format(
      "run %.3f ms (median); kernels %.3f ms; executor overhead %.3f ms (%.1f%% of the run, "
      "%.2f us per kernel)\n",
      runSeconds * 1e3, kernelSeconds * 1e3, overheadSeconds * 1e3,
      runSeconds > 0 ? 100 * overheadSeconds / runSeconds : 0.0,
      kernels.empty() ? 0.0 : overheadSeconds * 1e6 / double(kernels.size()));
  return s;
}

std::string ProfileReport::text() const {
  std::string s = header() + "\n";
  s += "   time ms   share   GFLOP/s     GB/s  bound     of roof  kernel\n";
  std::vector<const KernelProfileRow*> order;
  for (const KernelProfileRow& k : kernels) order.push_back(&k);
  std::stable_sort(order.begin(), order.end(),
                   [](auto* a, auto* b) { return a->seconds > b->seconds; });
  for (const KernelProfileRow* k : order)
    s += format("%10.4f  %5.1f%%  %8.2f  %7.2f  %-8s  %6.1f%%  %s\n", k->seconds * 1e3,
                100 * k->share, k->gflops, k->gbps, k->bound.c_str(), 100 * k->ofRoof,
                k->name.c_str());
  if (!verdicts.empty()) s += "\n";
  for (const std::string& v : verdicts) s += v + "\n";
  return s;
}

std::string ProfileReport::json() const {
  nlohmann::json ks = nlohmann::json::array();
  for (const KernelProfileRow& k : kernels)
    ks.push_back({{"name", k.name},
                  {"seconds", k.seconds},
                  {"share", k.share},
                  {"flops", k.flops},
                  {"bytes", k.bytes},
                  {"gflops", k.gflops},
                  {"gbps", k.gbps},
                  {"bound", k.bound},
                  {"of_roof", k.ofRoof}});
  nlohmann::json j = {{"model", model},
                      {"runs", runs},
                      {"threads", threads},
                      {"machine", {{"fma_peak_gflops", fmaPeakGflops}, {"copy_gbps", copyGBps}}},
                      {"run_seconds", runSeconds},
                      {"kernel_seconds", kernelSeconds},
                      {"overhead_seconds", overheadSeconds},
                      {"kernels", ks},
                      {"verdicts", verdicts}};
  return j.dump(2);
}

std::string ProfileReport::chromeTrace() const {
  nlohmann::json events = nlohmann::json::array();
  events.push_back({{"name", "process_name"},
                    {"ph", "M"},
                    {"pid", 1},
                    {"tid", 1},
                    {"args", {{"name", "fuselens " + model}}}});
  events.push_back({{"name", "run"},
                    {"cat", "run"},
                    {"ph", "X"},
                    {"ts", 0.0},
                    {"dur", tracedRunSeconds * 1e6},
                    {"pid", 1},
                    {"tid", 0}});
  for (const KernelProfileRow& k : kernels)
    events.push_back({{"name", k.name},
                      {"cat", "kernel"},
                      {"ph", "X"},
                      {"ts", k.start * 1e6},
                      {"dur", k.traced * 1e6},
                      {"pid", 1},
                      {"tid", 1},
                      {"args",
                       {{"median_us", k.seconds * 1e6},
                        {"gflops", k.gflops},
                        {"gbps", k.gbps},
                        {"bound", k.bound}}}});
  return nlohmann::json{{"traceEvents", events}, {"displayTimeUnit", "ms"}}.dump(1);
}

}  // namespace fuselens
