// Rounding-aware verdicts (rounding.h): the expected error of every element
// from the f32 sample, the check stat of expected and actual errors, and the
// verdict. Everything is accumulated in double.
#include "core/compare/rounding.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>

#include "core/compare/storage_floor.h"

namespace fuselens {
namespace {

bool sameNonFinite(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

RoundingCheck mismatchedShape(int64_t count) {
  RoundingCheck c;
  c.count = count;
  c.shapeMatch = false;
  c.verdict = NumericVerdict::Wrong;
  c.why = "shape mismatch";
  return c;
}

// Integers and bools carry no rounding: any difference is wrong.
RoundingCheck checkExactly(const TensorData& exact, const TensorData& actual) {
  RoundingCheck c;
  c.count = actual.numel();
  for (int64_t i = 0; i < c.count; ++i)
    if (exact.at(i) != actual.at(i)) ++c.integerMismatch;
  if (c.integerMismatch > 0) {
    c.verdict = NumericVerdict::Wrong;
    c.why = std::to_string(c.integerMismatch) +
            (c.integerMismatch == 1 ? " integer differs" : " integers differ");
    c.ratio = INFINITY;
  }
  return c;
}

// The verdict once the statistics are in: NaN/Inf mismatches are wrong
// outright; beyond the margin, a collapsed cosine or large sign flips make it
// wrong rather than imprecise.
void decide(RoundingCheck& c, double margin) {
  auto plural = [](int64_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
  };
  if (c.nonFiniteMismatch > 0) {
    c.verdict = NumericVerdict::Wrong;
    c.why = plural(c.nonFiniteMismatch, "NaN/Inf mismatch", "NaN/Inf mismatches");
    return;
  }
  if (!(c.ratio > margin)) return;  // within rounding (NaN ratio cannot occur: 0/0 is 0)
  if (c.signFlips > 0) {
    c.verdict = NumericVerdict::Wrong;
    c.why =
        plural(c.signFlips, "large value with the wrong sign", "large values with the wrong sign");
  } else if (c.cosine < kWrongCosine) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "cosine %.4f", c.cosine);
    c.verdict = NumericVerdict::Wrong;
    c.why = buf;
  } else {
    c.verdict = NumericVerdict::BeyondRounding;
  }
}

}  // namespace

double ulpOf(double v, DType t) {
  int mantissa = 52, minExp = -1074;  // f64: digits after the point, smallest subnormal
  switch (t) {
    case DType::F32:
      mantissa = 23, minExp = -149;
      break;
    case DType::F16:
      mantissa = 10, minExp = -24;
      break;
    case DType::BF16:
      mantissa = 7, minExp = -133;
      break;
    default:
      break;
  }
  const double a = std::fabs(v);
  if (!std::isfinite(a)) return INFINITY;
  if (a == 0) return std::ldexp(1.0, minExp);
  int e = 0;
  std::frexp(a, &e);  // a = f * 2^e with f in [0.5, 1): the leading bit is 2^(e-1)
  return std::ldexp(1.0, std::max(e - 1 - mantissa, minExp));
}

RoundingCheck checkRounding(const TensorData& exact, const TensorData& sample,
                            const Layout& referenceLayout, const TensorData& actual,
                            const Layout& actualLayout, const CompareOptions& opts,
                            const TensorData* other) {
  return checkRoundingStored(DType::F32, exact, sample, referenceLayout, actual, actualLayout, opts,
                             other);
}

RoundingCheck checkRoundingStored(DType storage, const TensorData& exactIn,
                                  const TensorData& sampleIn, const Layout& referenceLayout,
                                  const TensorData& actualIn, const Layout& actualLayout,
                                  const CompareOptions& opts, const TensorData* otherIn) {
  auto exact = toLogical(exactIn, referenceLayout);
  auto sample = toLogical(sampleIn, referenceLayout);
  auto actual = toLogical(actualIn, actualLayout);
  if (!exact || !sample || !actual || exact->shape != actual->shape ||
      sample->shape != actual->shape)
    return mismatchedShape(actualIn.numel());
  std::optional<TensorData> other;
  if (otherIn)
    if (auto o = toLogical(*otherIn, referenceLayout); o && o->shape == actual->shape)
      other = std::move(*o);
  if (!isFloat(actual->dtype)) return checkExactly(*exact, *actual);

  RoundingCheck c;
  c.count = actual->numel();
  std::vector<double> expected, err;
  expected.reserve(size_t(c.count));
  err.reserve(size_t(c.count));
  double dot = 0, normE = 0, normA = 0;
  for (int64_t i = 0; i < c.count; ++i) {
    const double x = exact->at(i), s = sample->at(i), a = actual->at(i);
    if (!std::isfinite(a) || !std::isfinite(x) || !std::isfinite(s)) {
      // f32 may overflow where f64 does not: a non-finite value the f32 sample
      // shares is rounding's doing too.
      if (!sameNonFinite(a, x) && !sameNonFinite(a, s)) ++c.nonFiniteMismatch;
      continue;
    }
    double e = std::max({std::fabs(s - x), ulpOf(x, actual->dtype), ulpOf(x, storage)});
    if (other && std::isfinite(other->at(i))) e = std::max(e, std::fabs(other->at(i) - x));
    expected.push_back(e);
    err.push_back(std::fabs(a - x));
    dot += x * a;
    normE += x * x;
    normA += a * a;
  }
  if (normE > 0 && normA > 0)
    c.cosine = dot / (std::sqrt(normE) * std::sqrt(normA));
  else
    c.cosine = normE == normA ? 1.0 : 0.0;
  // Sign flips count only where both values stand far above the largest
  // expected error: there no rounding can cross zero.
  double largest = 0;
  for (double e : expected) largest = std::max(largest, e);
  const double large = kLargeAgainstExpected * largest;
  for (int64_t i = 0; i < c.count; ++i) {
    const double x = exact->at(i), a = actual->at(i);
    if (std::isfinite(x) && std::isfinite(a) && x * a < 0 && std::fabs(x) > large &&
        std::fabs(a) > large)
      ++c.signFlips;
  }
  c.expected = opts.stat.of(expected);
  c.actual = opts.stat.of(err);
  c.ratio = c.actual == 0 ? 0 : c.expected > 0 ? c.actual / c.expected : INFINITY;
  decide(c, opts.margin);
  return c;
}

NumericVerdict verdictOf(const TensorMetrics& m) {
  if (!m.shapeMatch || m.nanMismatch > 0) return NumericVerdict::Wrong;
  return m.withinTolerance() ? NumericVerdict::WithinRounding : NumericVerdict::BeyondRounding;
}

const char* verdictWord(NumericVerdict v) {
  switch (v) {
    case NumericVerdict::WithinRounding:
      return "within rounding";
    case NumericVerdict::BeyondRounding:
      return "beyond rounding";
    case NumericVerdict::Wrong:
      return "wrong";
  }
  return "?";
}

std::string verdictText(const RoundingCheck& c) {
  char buf[64];
  switch (c.verdict) {
    case NumericVerdict::WithinRounding:
      return verdictWord(c.verdict);
    case NumericVerdict::BeyondRounding:
      std::snprintf(buf, sizeof buf, "beyond rounding (%.3g× the expected error)", c.ratio);
      return buf;
    case NumericVerdict::Wrong:
      return "wrong (" + c.why + ")";
  }
  return "?";
}

std::string CompareOptions::describe() const {
  char buf[128];
  if (rounding())
    std::snprintf(buf, sizeof buf, "(%s error against the f64 reference, margin %g×)",
                  stat.str().c_str(), margin);
  else if (stat.kind == ErrorStat::Kind::Max)
    std::snprintf(buf, sizeof buf, "(atol %g, rtol %g)", tolerance.atol, tolerance.rtol);
  else
    std::snprintf(buf, sizeof buf, "(atol %g, rtol %g, %s)", tolerance.atol, tolerance.rtol,
                  stat.str().c_str());
  return buf;
}

DType storagePrecision(const Graph& original, const Graph& g) {
  for (ValueId v : g.valueIds()) {
    const Value& val = g.value(v);
    if (val.type.dtype != DType::F16 && val.type.dtype != DType::BF16) continue;
    if (val.origin.valid() && original.hasValue(val.origin) &&
        original.value(val.origin).type.dtype == DType::F32)
      return val.type.dtype;
  }
  return DType::F32;
}

std::string describeStored(const CompareOptions& opts, DType storage) {
  std::string d = opts.describe();
  if (!opts.rounding() || storage == DType::F32 || d.empty() || d.back() != ')') return d;
  return d.substr(0, d.size() - 1) + ", " + std::string(dtypeName(storage)) + " storage)";
}

}  // namespace fuselens
