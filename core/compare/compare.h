// Tensor comparison: the metrics that say how far a compiled tensor is from
// its eager reference, and whether it is within tolerance.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/layout.h"
#include "core/ir/tensor.h"
#include "core/support/status.h"

namespace fuselens {

// What the tolerance or rounding check reduces over a tensor's elements, as
// Polygraphy's --check-error-stat: max (every element), mean, median, or a
// quantile in [0, 1].
struct ErrorStat {
  enum class Kind { Max, Mean, Median, Quantile } kind = Kind::Max;
  double q = 1.0;           // the quantile (Quantile only)
  std::string str() const;  // "max", "mean", "median", "quantile:0.99"
  // Parses the CLI's --check-stat; an error sentence names the accepted forms.
  static Expected<ErrorStat> parse(const std::string& text);
  // The statistic of `values` (reordered for median and quantile); 0 when empty.
  double of(std::vector<double>& values) const;
};

struct Tolerance {
  double atol = 1e-4;
  double rtol = 1e-4;
};

struct TensorMetrics {
  bool shapeMatch = true;
  int64_t count = 0;
  double maxAbs = 0, maxRel = 0, meanAbs = 0, rmse = 0, cosine = 1;
  int64_t nanMismatch = 0;     // NaN/Inf in one tensor but not in the other at the same index
  int64_t outOfTolerance = 0;  // elements failing |a-b| <= atol + rtol*|ref|
  // The check stat of |a-b| / (atol + rtol*|ref|) over finite elements: at
  // most 1 when within tolerance (with the max stat, outOfTolerance == 0).
  double toleranceStat = 0;
  int64_t worstIndex = -1;  // flat index of the largest absolute error
  // Largest distance in units in the last place of the tensors' own dtype (f16
  // steps for f16, f32 steps for f32; for integers the plain difference), over
  // elements finite on both sides: 0 means bit-identical values.
  int64_t maxUlp = 0;
  bool withinTolerance() const { return shapeMatch && nanMismatch == 0 && toleranceStat <= 1; }
};

TensorMetrics compareTensors(const TensorData& reference, const TensorData& actual,
                             const Tolerance& tol, const ErrorStat& stat = {});

// The same after undoing each side's storage layout (core/ir/layout.h), so a
// value blocked by the layout pass compares with its plain origin. A tensor
// whose shape does not fit its layout is a shape mismatch.
TensorMetrics compareTensors(const TensorData& reference, const Layout& referenceLayout,
                             const TensorData& actual, const Layout& actualLayout,
                             const Tolerance& tol, const ErrorStat& stat = {});

}  // namespace fuselens
