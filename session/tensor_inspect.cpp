// The tensor inspector's numbers (tensor_inspect.h): one pass over the
// elements for the stats, a second for the histogram, and index arithmetic
// for slices, so a large tensor is never copied to be looked at.
#include "session/tensor_inspect.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/compare/rounding.h"

namespace fuselens {
namespace {

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

Status sameShape(const TensorData& a, const TensorData& b) {
  if (a.shape == b.shape) return Status::ok();
  return Status::error("the two tensors differ in shape (" + shapeText(a) + " and " + shapeText(b) +
                       "), so there is no element-wise error");
}

}  // namespace

TensorStats tensorStats(const TensorData& t) {
  TensorStats s;
  s.count = t.numel();
  double mean = 0, m2 = 0;  // Welford: stable for large tensors with a large mean
  for (int64_t i = 0; i < s.count; ++i) {
    const double v = t.at(i);
    if (std::isnan(v)) {
      ++s.nan;
      continue;
    }
    if (std::isinf(v)) {
      ++(v > 0 ? s.posInf : s.negInf);
      continue;
    }
    if (v == 0) ++s.zeros;
    s.min = s.finite == 0 ? v : std::min(s.min, v);
    s.max = s.finite == 0 ? v : std::max(s.max, v);
    ++s.finite;
    const double d = v - mean;
    mean += d / double(s.finite);
    m2 += d * (v - mean);
  }
  s.mean = mean;
  s.std = s.finite > 0 ? std::sqrt(m2 / double(s.finite)) : 0;
  return s;
}

std::vector<std::string> statsLines(const TensorStats& s) {
  std::vector<std::string> lines;
  lines.push_back("count " + std::to_string(s.count) +
                  (s.finite == s.count ? "" : " (" + std::to_string(s.finite) + " finite)"));
  if (s.finite == 0) {
    lines.push_back("min -  max -");
    lines.push_back("mean -  std -");
  } else {
    lines.push_back("min " + num(s.min) + "  max " + num(s.max));
    lines.push_back("mean " + num(s.mean) + "  std " + num(s.std));
  }
  lines.push_back("NaN " + std::to_string(s.nan) + "  +Inf " + std::to_string(s.posInf) +
                  "  -Inf " + std::to_string(s.negInf) + "  zeros " + std::to_string(s.zeros));
  return lines;
}

std::string shapeText(const TensorData& t) {
  std::string s = std::string(dtypeName(t.dtype)) + "[";
  for (size_t i = 0; i < t.shape.size(); ++i) s += (i ? "," : "") + std::to_string(t.shape[i]);
  return s + "]";
}

double Histogram::binLo(size_t i) const {
  return counts.empty() ? lo : lo + (hi - lo) * double(i) / double(counts.size());
}

Expected<Histogram> histogram(const TensorData& t, int bins) {
  if (bins < 1)
    return Status::error("a histogram needs at least one bin (asked for " + std::to_string(bins) +
                         ")");
  const TensorStats s = tensorStats(t);
  Histogram h;
  h.ignored = s.nan + s.posInf + s.negInf;
  if (s.finite == 0) return h;
  h.lo = s.min;
  h.hi = s.max;
  // Every element equal: one bin holds them all, however many were asked for.
  h.counts.assign(s.min == s.max ? 1 : size_t(bins), 0);
  const double scale = h.hi > h.lo ? double(h.counts.size()) / (h.hi - h.lo) : 0;
  for (int64_t i = 0; i < s.count; ++i) {
    const double v = t.at(i);
    if (!std::isfinite(v)) continue;
    const auto b = int64_t((v - h.lo) * scale);
    ++h.counts[size_t(std::clamp<int64_t>(b, 0, int64_t(h.counts.size()) - 1))];
  }
  return h;
}

std::vector<std::string> histogramLines(const Histogram& h, int barWidth) {
  std::vector<std::string> lines;
  lines.push_back("histogram (" + std::to_string(h.counts.size()) + " bin" +
                  (h.counts.size() == 1 ? "" : "s") + ", " + std::to_string(h.ignored) +
                  " NaN/Inf ignored)");
  const int64_t most = h.counts.empty() ? 0 : *std::max_element(h.counts.begin(), h.counts.end());
  for (size_t i = 0; i < h.counts.size(); ++i) {
    const bool last = i + 1 == h.counts.size();
    const std::string range =
        "[" + num(h.binLo(i)) + ", " + num(last ? h.hi : h.binLo(i + 1)) + (last ? "]" : ")");
    const int bar = most > 0 ? int(double(h.counts[i]) * barWidth / double(most) + 0.5) : 0;
    char buf[160];
    std::snprintf(buf, sizeof buf, "  %-26s %-*s %lld", range.c_str(), barWidth,
                  std::string(size_t(bar), '#').c_str(), static_cast<long long>(h.counts[i]));
    lines.push_back(buf);
  }
  return lines;
}

SliceSpec defaultSlice(size_t rank) {
  SliceSpec s;
  s.fixed.assign(rank, 0);
  s.rowAxis = rank >= 2 ? int(rank) - 2 : rank == 1 ? 0 : -1;
  s.colAxis = rank >= 2 ? int(rank) - 1 : -1;
  return s;
}

Status checkSlice(const SliceSpec& s, const std::vector<int64_t>& shape) {
  const int rank = int(shape.size());
  if (s.fixed.size() != shape.size())
    return Status::error("the slice has " + std::to_string(s.fixed.size()) +
                         " entries but the tensor has " + std::to_string(rank) + " axes");
  const int want = std::min(rank, 2);
  const int got = (s.rowAxis >= 0) + (s.colAxis >= 0);
  if (got != want || s.rowAxis >= rank || s.colAxis >= rank ||
      (want == 2 && s.rowAxis == s.colAxis))
    return Status::error("a slice of a rank-" + std::to_string(rank) + " tensor shows " +
                         std::to_string(want) + " distinct axes");
  for (int a = 0; a < rank; ++a) {
    if (a == s.rowAxis || a == s.colAxis) continue;
    if (s.fixed[size_t(a)] < 0 || s.fixed[size_t(a)] >= shape[size_t(a)])
      return Status::error("index " + std::to_string(s.fixed[size_t(a)]) + " is out of axis " +
                           std::to_string(a) + "'s range 0.." +
                           std::to_string(shape[size_t(a)] - 1));
  }
  return Status::ok();
}

Expected<SliceSpec> parseSlice(const std::string& text, const std::vector<int64_t>& shape) {
  std::vector<std::string> parts(1);
  for (char c : text) {
    if (c == ',')
      parts.emplace_back();
    else if (c != ' ')
      parts.back() += c;
  }
  const std::string usage = "write one entry per axis, ':' for the axes shown (e.g. " +
                            sliceText(defaultSlice(shape.size()), shape.size()) + ")";
  if (shape.empty() || parts.size() != shape.size())
    return Status::error("the slice '" + text + "' does not fit a tensor of shape [" + [&] {
      std::string s;
      for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
      return s;
    }() + "]: " + usage);
  SliceSpec s;
  s.rowAxis = s.colAxis = -1;
  s.fixed.assign(shape.size(), 0);
  for (size_t a = 0; a < parts.size(); ++a) {
    if (parts[a] == ":") {
      if (s.colAxis >= 0)
        return Status::error("the slice '" + text + "' has more than two ':': " + usage);
      (s.rowAxis < 0 ? s.rowAxis : s.colAxis) = int(a);
      continue;
    }
    char* end = nullptr;
    const long long v = std::strtoll(parts[a].c_str(), &end, 10);
    if (parts[a].empty() || *end != '\0')
      return Status::error("the slice entry '" + parts[a] +
                           "' is neither a number nor ':': " + usage);
    s.fixed[a] = v;
  }
  if (Status st = checkSlice(s, shape); !st)
    return Status::error("the slice '" + text + "' does not fit: " + st.message());
  return s;
}

std::string sliceText(const SliceSpec& s, size_t rank) {
  std::string out;
  for (size_t a = 0; a < rank; ++a) {
    const bool shown = int(a) == s.rowAxis || int(a) == s.colAxis;
    out += (a ? "," : "") + (shown ? std::string(":") : std::to_string(s.fixed[a]));
  }
  return out;
}

int64_t sliceRows(const SliceSpec& s, const std::vector<int64_t>& shape) {
  return s.rowAxis >= 0 ? shape[size_t(s.rowAxis)] : 1;
}

int64_t sliceCols(const SliceSpec& s, const std::vector<int64_t>& shape) {
  return s.colAxis >= 0 ? shape[size_t(s.colAxis)] : 1;
}

int64_t sliceElement(const SliceSpec& s, const std::vector<int64_t>& shape, int64_t row,
                     int64_t col) {
  int64_t flat = 0;
  for (size_t a = 0; a < shape.size(); ++a) {
    const int64_t i = int(a) == s.rowAxis ? row : int(a) == s.colAxis ? col : s.fixed[a];
    flat = flat * shape[a] + i;
  }
  return flat;
}

Expected<TensorData> slice2D(const TensorData& t, const SliceSpec& s) {
  FL_RETURN_IF_ERROR(checkSlice(s, t.shape));
  const int64_t rows = sliceRows(s, t.shape), cols = sliceCols(s, t.shape);
  TensorData out(t.dtype, {rows, cols});
  const size_t size = dtypeSize(t.dtype);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      std::copy_n(t.bytes.data() + size_t(sliceElement(s, t.shape, r, c)) * size, size,
                  out.bytes.data() + size_t(r * cols + c) * size);
  return out;
}

Expected<TensorData> absErrorMap(const TensorData& reference, const TensorData& actual) {
  FL_RETURN_IF_ERROR(sameShape(reference, actual));
  TensorData out(DType::F64, reference.shape);
  double* o = out.data<double>();
  for (int64_t i = 0; i < out.numel(); ++i) o[i] = std::fabs(actual.at(i) - reference.at(i));
  return out;
}

Expected<TensorData> expectedErrorMap(const TensorData& exact, const TensorData& sample,
                                      const TensorData* eager, DType dtype) {
  FL_RETURN_IF_ERROR(sameShape(exact, sample));
  if (eager) FL_RETURN_IF_ERROR(sameShape(exact, *eager));
  TensorData out(DType::F64, exact.shape);
  double* o = out.data<double>();
  for (int64_t i = 0; i < out.numel(); ++i) {
    const double x = exact.at(i);
    double e = std::max(std::fabs(sample.at(i) - x), ulpOf(x, dtype));
    if (eager && std::isfinite(eager->at(i))) e = std::max(e, std::fabs(eager->at(i) - x));
    o[i] = e;
  }
  return out;
}

Expected<TensorData> errorRatioMap(const TensorData& exact, const TensorData& actual,
                                   const TensorData& expected) {
  FL_RETURN_IF_ERROR(sameShape(exact, actual));
  FL_RETURN_IF_ERROR(sameShape(exact, expected));
  TensorData out(DType::F64, exact.shape);
  double* o = out.data<double>();
  for (int64_t i = 0; i < out.numel(); ++i) {
    const double err = std::fabs(actual.at(i) - exact.at(i)), e = expected.at(i);
    o[i] = err == 0 ? 0 : e > 0 ? err / e : INFINITY;
  }
  return out;
}

std::string_view sideName(TensorSide s) {
  switch (s) {
    case TensorSide::Eager:
      return "eager";
    case TensorSide::Compiled:
      return "compiled";
    case TensorSide::Exact:
      return "exact";
    case TensorSide::Error:
      return "error";
    case TensorSide::Ratio:
      return "ratio";
  }
  return "eager";
}

std::optional<TensorSide> parseSide(std::string_view name) {
  for (TensorSide s : {TensorSide::Eager, TensorSide::Compiled, TensorSide::Exact,
                       TensorSide::Error, TensorSide::Ratio})
    if (sideName(s) == name) return s;
  return std::nullopt;
}

Expected<std::shared_ptr<const TensorData>> sideTensor(const InspectedTensor& t, TensorSide side) {
  using Shared = std::shared_ptr<const TensorData>;
  auto missing = [&](const std::string& what) {
    return Status::error(t.name + " has no " + what + (t.note.empty() ? "" : " (" + t.note + ")"));
  };
  auto owned = [](Expected<TensorData> e) -> Expected<Shared> {
    if (!e) return e.status();
    return Shared(std::make_shared<const TensorData>(std::move(*e)));
  };
  switch (side) {
    case TensorSide::Eager:
      if (!t.eager) return missing("eager tensor");
      return t.eager;
    case TensorSide::Exact:
      if (!t.exact) return missing("exact (f64) tensor");
      return t.exact;
    case TensorSide::Compiled:
      if (!t.compiled) return missing("compiled tensor");
      return t.compiled;
    case TensorSide::Error:
      if (!t.compiled || !t.eager) return missing("error map: it needs the compiled tensor");
      return owned(absErrorMap(*t.eager, *t.compiled));
    case TensorSide::Ratio:
      if (!t.compiled || !t.exact || !t.expected)
        return missing("error ratio: it needs the compiled tensor and a rounding compare");
      return owned(errorRatioMap(*t.exact, *t.compiled, *t.expected));
  }
  return missing("such side");
}

std::string headerLine(const InspectedTensor& t) {
  const TensorData* any = t.eager ? t.eager.get() : t.compiled.get();
  std::string s = t.name + (t.producer.empty() ? "" : " (from " + t.producer + ")") + ": " +
                  (any ? shapeText(*any) : "?");
  if (!t.layout.empty()) s += ", compiled " + t.layout + " shown as NCHW";
  return s;
}

}  // namespace fuselens
