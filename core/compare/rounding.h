// Rounding-aware verdicts: whether a compiled tensor is as close to the exact
// answer as f32 arithmetic alone explains. Three runs of the same model meet
// here, element by element:
//
//   exact    the eager reference computed in f64 (EagerOptions::widenToF64)
//   sample   the eager reference in f32, summing contractions in f32
//            (Accumulation::Storage): one honest f32 computation of the model
//   actual   the compiled run
//
// |sample - exact| is what f32 rounding did to this tensor through everything
// upstream of it; with a floor of one ulp of the exact value it is the
// element's expected error. The tensor's verdict compares one statistic (the
// check stat: max by default) of the actual error |actual - exact| with the
// same statistic of the expected error. docs/numerics.md says why this
// measure and why the margin.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/compare/compare.h"
#include "core/ir/layout.h"
#include "core/ir/tensor.h"

namespace fuselens {

// The actual error may reach this many times the expected error and still be
// rounding: the sample sums in one order and the compiled code in another, and
// compiled exp/tanh/erf may sit an ulp or two from the correctly rounded value.
inline constexpr double kRoundingMargin = 8.0;
// A tensor beyond rounding is wrong, not merely imprecise, when its cosine
// with the exact tensor is below this, or a value large against the expected
// error has the wrong sign.
inline constexpr double kWrongCosine = 0.99;
inline constexpr double kLargeAgainstExpected = 100.0;

enum class NumericVerdict { WithinRounding, BeyondRounding, Wrong };

// How compare judges tensors. The default judges against the expected
// rounding error; a Tolerance converts implicitly to the fixed mode, since a
// caller that names atol and rtol asked for them.
struct CompareOptions {
  enum class Mode { Rounding, Fixed } mode = Mode::Rounding;
  Tolerance tolerance;  // Fixed: |actual - ref| <= atol + rtol*|ref| per element
  ErrorStat stat;
  double margin = kRoundingMargin;  // Rounding: within when actual <= margin * expected

  CompareOptions() = default;
  CompareOptions(const Tolerance& t) : mode(Mode::Fixed), tolerance(t) {}  // NOLINT: implicit
  bool rounding() const { return mode == Mode::Rounding; }
  // "(max error against the f64 reference, margin 8×)" or "(atol 0.0001, rtol 0.0001)".
  std::string describe() const;
};

struct RoundingCheck {
  int64_t count = 0;
  double expected = 0;            // the check stat of the expected error (f32 rounding alone)
  double actual = 0;              // the check stat of |actual - exact|
  double ratio = 0;               // actual / expected: 0 when both are 0, inf when only expected is
  double cosine = 1;              // of actual with exact
  int64_t nonFiniteMismatch = 0;  // NaN/Inf in actual where exact and sample have another value
  int64_t signFlips = 0;          // opposite signs where both are large against the expected error
  int64_t integerMismatch = 0;    // integer tensors: elements that differ (compared exactly)
  bool shapeMatch = true;
  NumericVerdict verdict = NumericVerdict::WithinRounding;
  std::string why;  // for Wrong: "3 NaN/Inf mismatches", "cosine 0.41", ...
};

// The verdict of `actual` against `exact`, with `sample` for the expected error.
// `other`, when given, is a second f32 computation of the same tensor (the
// eager run: f32 storage, double sums); an element's expected error is then
// the larger of the two samples' errors, which steadies the estimate on small
// tensors, where one sample's max is a poor guide to another computation's.
// Tensors in any layout: each is unblocked first (exact, samples share one).
// Integer and bool tensors are compared exactly (no rounding to explain).
RoundingCheck checkRounding(const TensorData& exact, const TensorData& sample,
                            const Layout& referenceLayout, const TensorData& actual,
                            const Layout& actualLayout, const CompareOptions& opts,
                            const TensorData* other = nullptr);

// The fixed-tolerance verdict in the same words: a shape or NaN/Inf mismatch
// is wrong, anything else out of tolerance beyond.
NumericVerdict verdictOf(const TensorMetrics& m);

// "within rounding", "beyond rounding (12× the expected error)", "wrong (cosine 0.41)".
std::string verdictText(const RoundingCheck& c);
const char* verdictWord(NumericVerdict v);  // "within rounding", "beyond rounding", "wrong"

// One unit in the last place of |v| in dtype t (f32, f16, bf16, f64): the
// spacing of representable numbers there; the smallest subnormal at 0.
double ulpOf(double v, DType t);

}  // namespace fuselens
