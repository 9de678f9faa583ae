// Session::profile and the compile summary: the profiler's analysis (roofline
// verdicts per kernel) on top of the compiled module's timings and costs.
#include <algorithm>
#include <cstdio>

#include "codegen/runtime/machine_peaks.h"
#include "codegen/runtime/runtime.h"
#include "codegen/target.h"
#include "session/session.h"

namespace fuselens {
namespace {

// Resets the run's thread cap when the profile ends, however it ends.
struct ThreadCap {
  explicit ThreadCap(int n) { fuselens_set_max_threads(n); }
  ~ThreadCap() { fuselens_set_max_threads(0); }
};

// Rates, bound and distance from the roof of one kernel.
void roofline(KernelProfileRow& k, double peakGflops, double copyGBps) {
  if (k.seconds <= 0) return;
  k.gflops = k.flops / k.seconds / 1e9;
  k.gbps = k.bytes / k.seconds / 1e9;
  if (k.bound == "host") return;
  double intensity = k.bytes > 0 ? k.flops / k.bytes : 0;
  bool compute = peakGflops > 0 && copyGBps > 0 && intensity * copyGBps >= peakGflops;
  k.bound = compute ? "compute" : "memory";
  if (compute)
    k.ofRoof = k.gflops / peakGflops;
  else if (copyGBps > 0)
    k.ofRoof = k.flops > 0 ? k.gflops / (intensity * copyGBps) : k.gbps / copyGBps;
}

std::string percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100 * fraction);
  return buf;
}

std::vector<std::string> verdictsOf(const ProfileReport& r) {
  std::vector<std::string> out;
  std::vector<const KernelProfileRow*> order;
  for (const KernelProfileRow& k : r.kernels) order.push_back(&k);
  std::stable_sort(order.begin(), order.end(),
                   [](auto* a, auto* b) { return a->seconds > b->seconds; });
  for (size_t i = 0; i < order.size() && i < 3; ++i) {
    const KernelProfileRow& k = *order[i];
    std::string s = k.name + " takes " + percent(k.share) + " of the kernel time";
    if (k.bound == "host")
      s += " and runs as a host kernel (not generated code).";
    else if (k.bound == "memory" && k.ofRoof > 1)
      s += " at " + percent(k.ofRoof) + " of the memory roof: its data stays in cache.";
    else
      s += " at " + percent(k.ofRoof) + " of its " + k.bound + " roof.";
    out.push_back(s);
  }
  if (r.runSeconds > 0 && r.overheadSeconds > 0.1 * r.runSeconds) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.2f us", r.overheadSeconds * 1e6 / double(r.kernels.size()));
    out.push_back("The executor's overhead between kernels is " +
                  percent(r.overheadSeconds / r.runSeconds) + " of the run (" + buf +
                  " per kernel).");
  }
  double accounted = r.kernelSeconds + r.overheadSeconds;
  if (accounted > 0 && r.runSeconds > 1.2 * accounted) {
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "Runs took %.3f ms (median) but their kernels and overhead add up to %.3f ms: "
                  "other processes took the difference; on a quiet machine the figures are "
                  "steadier.",
                  r.runSeconds * 1e3, accounted * 1e3);
    out.push_back(buf);
  }
  return out;
}

}  // namespace

std::string Session::compileSummary() const {
  return compiled_ ? compileStatsText(compiled_->stats()) : std::string();
}

Expected<ProfileReport> Session::profile(const std::map<std::string, TensorData>& inputs,
                                         const ProfileRequest& request, const Progress& progress,
                                         const CancelToken& cancel) {
  if (!model_) return Status::error("no model is open");
  if (request.runs < 1) return Status::error("--runs must be at least 1", "--runs");
  if (request.threads < 0) return Status::error("--threads must be 0 (all) or more", "--threads");
  FL_RETURN_IF_ERROR(fitToInputs(inputs, progress, cancel));
  if (!compiled_) FL_RETURN_IF_ERROR(compile(compileOptions_, progress, cancel));
  ProfileReport r;
  r.model = path_;
  r.runs = request.runs;
  r.threads = request.threads > 0 ? request.threads : hostTarget().threads;
  report(progress, 0.1, "measuring the machine's FMA peak and copy bandwidth");
  const MachinePeaks& peaks = machinePeaks(r.threads);
  r.fmaPeakGflops = peaks.fmaGflops;
  r.copyGBps = peaks.copyGBps;
  if (cancel.cancelled()) return Status::error("profile cancelled");
  report(progress, 0.5, "timing " + std::to_string(request.runs) + " runs");
  ThreadCap cap(request.threads);
  auto p = compiled_->profile(inputs, request.runs);
  if (!p) return p.status();
  const auto& kernels = compiled_->kernels();
  std::vector<KernelCost> costs = compiled_->kernelCosts();
  for (size_t i = 0; i < kernels.size(); ++i) {
    KernelProfileRow k;
    k.name = kernels[i].name;
    k.seconds = p->kernelSeconds[i];
    k.start = p->traceStart[i];
    k.traced = p->traceSeconds[i];
    if (i < costs.size()) k.flops = costs[i].flops, k.bytes = costs[i].bytes;
    if (kernels[i].fallback || kernels[i].driver) k.bound = "host";
    r.kernelSeconds += k.seconds;
    r.kernels.push_back(std::move(k));
  }
  for (KernelProfileRow& k : r.kernels) {
    k.share = r.kernelSeconds > 0 ? k.seconds / r.kernelSeconds : 0;
    roofline(k, r.fmaPeakGflops, r.copyGBps);
  }
  r.runSeconds = p->runSeconds;
  r.tracedRunSeconds = p->traceRunSeconds;
  r.overheadSeconds = p->overheadSeconds;
  r.verdicts = verdictsOf(r);
  report(progress, 1.0, "profiled");
  profile_ = r;
  return r;
}

std::map<std::string, double> Session::kernelSecondsByValue() const {
  std::map<std::string, double> out;
  if (!profile_ || !compiled_) return out;
  const auto& kernels = compiled_->kernels();
  const Graph& g = finalGraph();
  for (size_t i = 0; i < kernels.size() && i < profile_->kernels.size(); ++i) {
    if (kernels[i].outputs.empty() || !g.hasValue(kernels[i].outputs[0])) continue;
    out[g.value(kernels[i].outputs[0]).name] += profile_->kernels[i].seconds;
  }
  return out;
}

}  // namespace fuselens
