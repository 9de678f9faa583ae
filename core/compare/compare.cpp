// Tensor comparison metrics. Everything is accumulated in double so the
// metrics themselves add no error worth reporting.
#include "core/compare/compare.h"

#include <cmath>

namespace fuselens {

TensorMetrics compareTensors(const TensorData& reference, const TensorData& actual,
                             const Tolerance& tol) {
  TensorMetrics m;
  m.count = reference.numel();
  if (reference.shape != actual.shape) {
    m.shapeMatch = false;
    return m;
  }
  double sumAbs = 0, sumSq = 0, dot = 0, normRef = 0, normAct = 0, worst = -1;
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
  }
  if (m.count > 0) {
    m.meanAbs = sumAbs / double(m.count);
    m.rmse = std::sqrt(sumSq / double(m.count));
  }
  if (normRef > 0 && normAct > 0) m.cosine = dot / (std::sqrt(normRef) * std::sqrt(normAct));
  else m.cosine = (normRef == normAct) ? 1.0 : 0.0;
  return m;
}

TensorMetrics compareTensors(const TensorData& reference, const Layout& referenceLayout,
                             const TensorData& actual, const Layout& actualLayout,
                             const Tolerance& tol) {
  if (!referenceLayout.blocked() && !actualLayout.blocked())
    return compareTensors(reference, actual, tol);
  auto r = toLogical(reference, referenceLayout);
  auto a = toLogical(actual, actualLayout);
  if (!r || !a) {
    TensorMetrics m;
    m.count = reference.numel();
    m.shapeMatch = false;
    return m;
  }
  return compareTensors(*r, *a, tol);
}

}  // namespace fuselens
