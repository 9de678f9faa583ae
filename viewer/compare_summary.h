// The one-line summary of a compare report that the status bar shows:
//   compare: 4 tensors, all within tolerance (max abs 2.4e-07)
//   compare: 1 of 4 tensors out of tolerance, first at %3 (group 0)
// Qt-free so it can be tested without widgets.
#pragma once

#include <string>

namespace fuselens {
class Graph;
struct CompareReport;
struct CompareRow;
struct IsolatedReport;
}  // namespace fuselens

namespace fuselens::viewer {

// `graph` is the graph the report's value ids refer to (the final snapshot);
// it names the fused group that produced the first divergent tensor.
std::string compareSummary(const CompareReport& report, const Graph& graph);

// The kernel that produced a row's tensor: "group 0" for a fused group of
// `graph`, else the report's producer name.
// The isolated check in one line:
//   alone: 3 kernels within tolerance when fed eager inputs
//   alone: kernel k4_softmax differs when fed eager inputs (max abs 0.12)
//   alone: every kernel within tolerance; the end-to-end error accumulated upstream
std::string isolatedSummary(const IsolatedReport& report);

std::string kernelName(const CompareRow& row, const Graph& graph);

}  // namespace fuselens::viewer
