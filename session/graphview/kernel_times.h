// A profile's kernel times on the drawn graph. Times are keyed by the value
// each kernel writes first (Session::kernelSecondsByValue), so the op that
// makes that value is the kernel's op: a plain op shows its kernel's time, a
// fused cluster the sum over its members. The view, the SVG writer and the
// collapsed boxes' badges format them alike. Qt-free.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "session/graphview/flat_graph.h"

namespace fuselens::graphview {

// In the unit that keeps three digits: "412 us", "3.07 ms", "1.2 s".
std::string formatSeconds(double seconds);

// The summed time of the kernels whose first value `n` makes; -1 when none.
double secondsOf(const LayoutNode& n, const std::map<std::string, double>& seconds);

// Per fused group (LayoutNode::group) among `nodes`: its members' kernels summed.
std::map<int, double> secondsByGroup(const std::vector<LayoutNode>& nodes,
                                     const std::map<std::string, double>& seconds);

}  // namespace fuselens::graphview
