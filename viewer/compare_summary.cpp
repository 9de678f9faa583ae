// Formats a CompareReport as the status bar's one line.
#include "viewer/compare_summary.h"

#include <algorithm>
#include <cstdio>

#include "session/session.h"

namespace fuselens::viewer {
namespace {

std::string shortNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2g", v);
  return buf;
}

std::string valueName(const std::string& name) {
  return !name.empty() && name[0] == '%' ? name : "%" + name;
}

}  // namespace

std::string kernelName(const CompareRow& row, const Graph& g) {
  if (g.hasValue(row.value)) {
    const NodeId p = g.value(row.value).producer;
    if (p.valid() && g.hasNode(p)) {
      const Node& n = g.node(p);
      if (n.op == kFusedOp && n.domain == kFuseLensDomain)
        return "group " + std::to_string(n.attrs.getInt("group", -1));
    }
  }
  return row.producer;
}

std::string compareSummary(const CompareReport& report, const Graph& graph) {
  const size_t total = report.rows.size();
  if (total == 0) return "compare: no tensors compared";
  size_t bad = 0;
  double maxAbs = 0;
  const CompareRow* first = nullptr;
  for (const CompareRow& row : report.rows) {
    maxAbs = std::max(maxAbs, row.metrics.maxAbs);
    if (row.metrics.withinTolerance()) continue;
    ++bad;
    if (!first) first = &row;
  }
  const std::string tensors = std::to_string(total) + (total == 1 ? " tensor" : " tensors");
  if (bad == 0)
    return "compare: " + tensors + ", all within tolerance (max abs " + shortNumber(maxAbs) + ")";
  std::string where = kernelName(*first, graph);
  return "compare: " + std::to_string(bad) + " of " + tensors + " out of tolerance, first at " +
         valueName(first->name) + (where.empty() ? "" : " (" + where + ")");
}

std::string isolatedSummary(const IsolatedReport& report) {
  size_t checked = 0, skipped = 0;
  for (const IsolatedRow& r : report.rows) (r.verdict == IsolatedVerdict::Skipped ? skipped : checked)++;
  std::string tail = skipped ? " (" + std::to_string(skipped) + " skipped)" : "";
  if (const IsolatedRow* first = report.firstKernelDiffering())
    return "alone: kernel " + first->kernel + " differs when fed eager inputs (max abs " +
           shortNumber(first->isolated.maxAbs) + ")" + tail;
  if (!report.allWithin())
    return "alone: every kernel within tolerance; the end-to-end error accumulated upstream" + tail;
  return "alone: " + std::to_string(checked) + " tensors within tolerance when fed eager inputs" + tail;
}

}  // namespace fuselens::viewer
