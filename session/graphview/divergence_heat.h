// The divergence heat overlay's numbers: for each compared tensor (by value
// name, which every snapshot keeps), how far the compiled run is from eager,
// and where that falls on the overlay's log scale. Qt-free.
#pragma once

#include <map>
#include <string>

namespace fuselens {
struct CompareReport;
}

namespace fuselens::graphview {

struct ValueHeat {
  double maxRel = 0;
  double maxAbs = 0;
  bool within = true;  // within the report's tolerance
};

// One entry per report row, keyed by the value's name.
std::map<std::string, ValueHeat> heatByValue(const CompareReport& report);

// The scale the overlay and its legend share: maxRel on a log scale, 0 at or
// below kHeatLow, 1 at or above kHeatHigh (NaN counts as 1).
inline constexpr double kHeatLow = 1e-8;
inline constexpr double kHeatHigh = 1.0;
double heatFraction(double maxRel);
// Out of tolerance never reads as cool: at least this far up the scale.
double heatFraction(const ValueHeat& heat);

}  // namespace fuselens::graphview
