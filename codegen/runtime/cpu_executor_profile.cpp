// The CPU executor's timing (see cpu_executor.h): per-kernel medians and the
// traced run that `profile` shows, all through runInto, the deployment path.
#include <algorithm>
#include <chrono>
#include <cmath>

#include "codegen/runtime/cpu_executor.h"

namespace fuselens {

Expected<std::vector<double>> CpuExecutor::profile(const std::map<std::string, TensorData>& inputs,
                                                   int runs) const {
  std::map<std::string, TensorData> out;
  std::vector<double> one;
  FL_RETURN_IF_ERROR(runInto(inputs, out, {}, &one));  // warm-up
  std::vector<std::vector<double>> all(kernels_.size());
  for (int r = 0; r < std::max(1, runs); ++r) {
    FL_RETURN_IF_ERROR(runInto(inputs, out, {}, &one));
    for (size_t i = 0; i < one.size(); ++i) all[i].push_back(one[i]);
  }
  std::vector<double> med;
  for (auto& v : all) {
    std::sort(v.begin(), v.end());
    med.push_back(v[v.size() / 2]);
  }
  return med;
}

Status CpuExecutor::profileRuns(const std::map<std::string, TensorData>& inputs, int runs,
                                std::vector<double>& kernelMedians, double& runMedian,
                                double& overheadMedian, std::vector<double>& traceStart,
                                std::vector<double>& traceSeconds, double& traceRun) const {
  // Each run gives its kernels' times, its whole time and the difference (the
  // executor's own work); medians of each, taken over the same runs, so a run
  // preempted by another process shifts neither the kernels nor the overhead.
  std::map<std::string, TensorData> out;
  std::vector<double> secs, starts;
  FL_RETURN_IF_ERROR(runInto(inputs, out, {}, &secs, &starts));  // warm-up
  size_t n = size_t(std::max(1, runs));
  std::vector<std::vector<double>> perKernel(kernels_.size());
  std::vector<double> totals, overheads;
  std::vector<std::vector<double>> allStarts, allSecs;
  for (size_t r = 0; r < n; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    FL_RETURN_IF_ERROR(runInto(inputs, out, {}, &secs, &starts));
    double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double sum = 0;
    for (size_t i = 0; i < secs.size(); ++i) perKernel[i].push_back(secs[i]), sum += secs[i];
    totals.push_back(total);
    overheads.push_back(std::max(0.0, total - sum));
    allStarts.push_back(starts);
    allSecs.push_back(secs);
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  kernelMedians.clear();
  for (auto& v : perKernel) kernelMedians.push_back(median(v));
  runMedian = median(totals);
  overheadMedian = median(overheads);
  // The trace shows the run whose length is the median one.
  size_t pick = 0;
  for (size_t r = 0; r < n; ++r)
    if (std::fabs(totals[r] - runMedian) < std::fabs(totals[pick] - runMedian)) pick = r;
  traceStart = allStarts[pick];
  traceSeconds = allSecs[pick];
  traceRun = totals[pick];
  return Status::ok();
}

}  // namespace fuselens
