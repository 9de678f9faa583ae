// Report rows -> per-value heat on the overlay's log scale.
#include "session/graphview/divergence_heat.h"

#include <algorithm>
#include <cmath>

#include "session/session.h"

namespace fuselens::graphview {
namespace {

constexpr double kOutOfToleranceFloor = 0.6;

}  // namespace

std::map<std::string, ValueHeat> heatByValue(const CompareReport& report) {
  std::map<std::string, ValueHeat> out;
  for (const CompareRow& row : report.rows) {
    if (row.fallback) continue;  // not compiled: no heat to show, rather than a reassuring zero
    ValueHeat h;
    h.maxRel = row.metrics.maxRel;
    h.maxAbs = row.metrics.maxAbs;
    h.within = row.verdict == NumericVerdict::WithinRounding;
    h.ratio = errorRatio(row);
    h.status = rowStatus(row);
    if (!row.metrics.shapeMatch || row.metrics.nanMismatch > 0) h.maxRel = INFINITY;
    out[row.name] = h;
  }
  return out;
}

double heatFraction(double ratio) {
  if (std::isnan(ratio)) return 1;
  if (ratio <= kHeatLow) return 0;
  const double lo = std::log10(kHeatLow), hi = std::log10(kHeatHigh);
  return std::clamp((std::log10(ratio) - lo) / (hi - lo), 0.0, 1.0);
}

double heatFraction(const ValueHeat& heat) {
  const double f = heatFraction(heat.ratio);
  return heat.within ? f : std::max(f, kOutOfToleranceFloor);
}

}  // namespace fuselens::graphview
