// Kernel times on ops and clusters: see kernel_times.h.
#include "session/graphview/kernel_times.h"

#include <algorithm>
#include <cstdio>

namespace fuselens::graphview {

std::string formatSeconds(double seconds) {
  char buf[32];
  if (seconds < 1e-6)  // tiny kernels still say something: "0.35 us", not "0 us"
    std::snprintf(buf, sizeof buf, "%.2f us", seconds * 1e6);
  else if (seconds < 1e-3)
    std::snprintf(buf, sizeof buf, "%.3g us", seconds * 1e6);
  else if (seconds < 1)
    std::snprintf(buf, sizeof buf, "%.3g ms", seconds * 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.3g s", seconds);
  return buf;
}

double secondsOf(const LayoutNode& n, const std::map<std::string, double>& seconds) {
  if (n.kind != LayoutNodeKind::Op || seconds.empty()) return -1;
  double sum = -1;
  for (const std::string& v : n.outputs)
    if (auto it = seconds.find(v); it != seconds.end()) sum = std::max(sum, 0.0) + it->second;
  return sum;
}

std::map<int, double> secondsByGroup(const std::vector<LayoutNode>& nodes,
                                     const std::map<std::string, double>& seconds) {
  std::map<int, double> out;
  if (seconds.empty()) return out;
  for (const LayoutNode& n : nodes)
    if (const double t = secondsOf(n, seconds); n.group >= 0 && t >= 0) out[n.group] += t;
  return out;
}

}  // namespace fuselens::graphview
