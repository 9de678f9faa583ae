// The Graphviz side of a dot run, kept apart so a small helper executable
// (fuselens-dot) can hold it: dot runs there, in a process of its own, which
// a time budget or a cancel can kill and whose crash leaves the app alone.
// Geometry and graphs travel as doubles (see dot_process.cpp for the parent).
#pragma once

#include <vector>

#include "session/graphview/box_layout.h"

namespace fuselens::graphview {

// Lays `g` out with dot in this process: width, height, then per node a box,
// per cluster a box, per edge its spline, arrow and label (decoded by runDot).
// Empty when dot failed.
std::vector<double> layOutWithDot(const BoxGraph& g);

std::vector<double> encodeBoxGraph(const BoxGraph& g);
// False when the doubles do not describe a graph (sizes, indices out of range).
bool decodeBoxGraph(const std::vector<double>& in, BoxGraph& g);

}  // namespace fuselens::graphview
