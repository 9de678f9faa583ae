// The divergence heat overlay's numbers: for each compared tensor (by value
// name, which every snapshot keeps), how far the compiled run is from eager
// measured in its expected error (errorRatio in session/compare_report.h: the
// expected f32 rounding error, or the allowed error under fixed tolerances),
// and where that falls on the overlay's log scale. Qt-free.
#pragma once

#include <map>
#include <string>

namespace fuselens {
struct CompareReport;
}

namespace fuselens::graphview {

struct ValueHeat {
  double maxRel = 0;  // shown beside the colour; the colour itself follows `ratio`
  double maxAbs = 0;
  bool within = true;  // within rounding (the report's tolerance)
  double ratio = 0;    // error over expected error; inf for NaN/Inf or shape mismatches
  std::string status;  // the row's status words, as the CLI's compare table prints them
};

// One entry per report row, keyed by the value's name.
std::map<std::string, ValueHeat> heatByValue(const CompareReport& report);

// The scale the overlay and its legend share: error over expected error on a
// log scale, 0 at or below kHeatLow, 1 at or above kHeatHigh (NaN counts as 1).
// A ratio of 1 is an error as large as rounding alone makes; the rounding
// verdict allows up to kRoundingMargin (8) before calling it beyond.
inline constexpr double kHeatLow = 0.1;
inline constexpr double kHeatHigh = 1e4;
double heatFraction(double ratio);
// Out of tolerance never reads as cool: at least this far up the scale.
double heatFraction(const ValueHeat& heat);

}  // namespace fuselens::graphview
