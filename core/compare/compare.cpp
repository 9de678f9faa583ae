// Tensor comparison metrics. Everything is accumulated in double so the
// metrics themselves add no error worth reporting.
#include "core/compare/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace fuselens {
namespace {

// A float's bits mapped so that integer order is numeric order (-0 and +0
// both to 0), which makes the ULP distance a subtraction.
int64_t orderedBits(uint64_t bits, int width) {
  const uint64_t sign = uint64_t(1) << (width - 1);
  const int64_t magnitude = int64_t(bits & (sign - 1));
  return (bits & sign) ? -magnitude : magnitude;
}

uint64_t rawBits(const TensorData& t, int64_t i) {
  switch (t.dtype) {
    case DType::F64: {
      uint64_t b;
      std::memcpy(&b, t.data<double>() + i, 8);
      return b;
    }
    case DType::F32: {
      uint32_t b;
      std::memcpy(&b, t.data<float>() + i, 4);
      return b;
    }
    default:
      return t.data<uint16_t>()[i];  // f16, bf16
  }
}

int64_t ulpDistance(const TensorData& r, const TensorData& a, int64_t i, double rv, double av) {
  int width = 0;
  switch (r.dtype) {
    case DType::F64:
      width = 64;
      break;
    case DType::F32:
      width = 32;
      break;
    case DType::F16:
    case DType::BF16:
      width = 16;
      break;
    default: {
      const double d = std::fabs(rv - av);
      return d >= 9.2e18 ? std::numeric_limits<int64_t>::max() : int64_t(d);
    }
  }
  const int64_t x = orderedBits(rawBits(r, i), width), y = orderedBits(rawBits(a, i), width);
  // Both lie within +-2^63 for width 64 only in magnitude; saturate the difference.
  if ((x > 0 && y < 0 && x > std::numeric_limits<int64_t>::max() + y) ||
      (x < 0 && y > 0 && y > std::numeric_limits<int64_t>::max() + x))
    return std::numeric_limits<int64_t>::max();
  return x > y ? x - y : y - x;
}

// |d| / (atol + rtol*|r|): 0 for no error, inf when the allowance is 0.
double toleranceRatio(double d, double r, const Tolerance& tol) {
  if (d == 0) return 0;
  const double allowed = tol.atol + tol.rtol * std::fabs(r);
  return allowed > 0 ? d / allowed : INFINITY;
}

}  // namespace

std::string ErrorStat::str() const {
  switch (kind) {
    case Kind::Max:
      return "max";
    case Kind::Mean:
      return "mean";
    case Kind::Median:
      return "median";
    case Kind::Quantile: {
      char buf[40];
      std::snprintf(buf, sizeof buf, "quantile:%g", q);
      return buf;
    }
  }
  return "max";
}

Expected<ErrorStat> ErrorStat::parse(const std::string& text) {
  ErrorStat s;
  if (text == "max") return s;
  if (text == "mean" || text == "median") {
    s.kind = text == "mean" ? Kind::Mean : Kind::Median;
    return s;
  }
  const std::string prefix = "quantile:";
  if (text.rfind(prefix, 0) == 0) {
    char* end = nullptr;
    const std::string num = text.substr(prefix.size());
    const double q = std::strtod(num.c_str(), &end);
    if (!num.empty() && end && *end == 0 && q >= 0 && q <= 1) {
      s.kind = Kind::Quantile;
      s.q = q;
      return s;
    }
  }
  return Status::error("check stat '" + text +
                       "' is not one of max, mean, median, quantile:Q (Q between 0 and 1)");
}

double ErrorStat::of(std::vector<double>& v) const {
  if (v.empty()) return 0;
  switch (kind) {
    case Kind::Max:
      return *std::max_element(v.begin(), v.end());
    case Kind::Mean: {
      double sum = 0;
      for (double x : v) sum += x;
      return sum / double(v.size());
    }
    case Kind::Median:
    case Kind::Quantile: {
      // The nearest-rank quantile: an element of v, so "quantile:1" is the max.
      const double p = kind == Kind::Median ? 0.5 : q;
      const size_t rank = p <= 0 ? 1 : size_t(std::ceil(p * double(v.size())));
      const size_t k = std::min(v.size(), std::max<size_t>(rank, 1)) - 1;
      std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(k), v.end());
      return v[k];
    }
  }
  return 0;
}

TensorMetrics compareTensors(const TensorData& reference, const TensorData& actual,
                             const Tolerance& tol, const ErrorStat& stat) {
  TensorMetrics m;
  m.count = reference.numel();
  if (reference.shape != actual.shape) {
    m.shapeMatch = false;
    return m;
  }
  double sumAbs = 0, sumSq = 0, dot = 0, normRef = 0, normAct = 0, worst = -1;
  std::vector<double> ratios;
  ratios.reserve(size_t(m.count));
  for (int64_t i = 0; i < m.count; ++i) {
    double r = reference.at(i), a = actual.at(i);
    bool rFinite = std::isfinite(r), aFinite = std::isfinite(a);
    if (!rFinite || !aFinite) {
      // Equal non-finite values (inf == inf, NaN and NaN) agree; anything else mismatches.
      bool same = (std::isnan(r) && std::isnan(a)) || r == a;
      if (!same) ++m.nanMismatch;
      continue;
    }
    double d = std::fabs(r - a);
    if (reference.dtype == actual.dtype)
      m.maxUlp = std::max(m.maxUlp, ulpDistance(reference, actual, i, r, a));
    sumAbs += d;
    sumSq += d * d;
    dot += r * a;
    normRef += r * r;
    normAct += a * a;
    if (d > worst) {
      worst = d;
      m.worstIndex = i;
    }
    m.maxAbs = std::max(m.maxAbs, d);
    if (std::fabs(r) > 0) m.maxRel = std::max(m.maxRel, d / std::fabs(r));
    if (d > tol.atol + tol.rtol * std::fabs(r)) ++m.outOfTolerance;
    ratios.push_back(toleranceRatio(d, r, tol));
  }
  m.toleranceStat = stat.of(ratios);
  if (m.count > 0) {
    m.meanAbs = sumAbs / double(m.count);
    m.rmse = std::sqrt(sumSq / double(m.count));
  }
  if (normRef > 0 && normAct > 0)
    m.cosine = dot / (std::sqrt(normRef) * std::sqrt(normAct));
  else
    m.cosine = (normRef == normAct) ? 1.0 : 0.0;
  return m;
}

TensorMetrics compareTensors(const TensorData& reference, const Layout& referenceLayout,
                             const TensorData& actual, const Layout& actualLayout,
                             const Tolerance& tol, const ErrorStat& stat) {
  if (!referenceLayout.blocked() && !actualLayout.blocked())
    return compareTensors(reference, actual, tol, stat);
  auto r = toLogical(reference, referenceLayout);
  auto a = toLogical(actual, actualLayout);
  if (!r || !a) {
    TensorMetrics m;
    m.count = reference.numel();
    m.shapeMatch = false;
    return m;
  }
  return compareTensors(*r, *a, tol, stat);
}

}  // namespace fuselens
