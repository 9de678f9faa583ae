// Reductions: Reduce{Sum,Mean,Max,Min,Prod,L1,L2,SumSquare,LogSum,LogSumExp}
// with axes as an input (opset 18 form; the importer moves older `axes`
// attributes into a constant input), ArgMax/ArgMin, CumSum, TopK, and
// Softmax/LogSoftmax with opset-13 semantics (normalize along `axis`, default
// -1; the importer rewrites the older flatten-to-2-D form). Accumulation is in
// double, integer sums and products included: ONNX Runtime (1.32) accumulates
// them in double too and saturates the result to the dtype's range (an i64 sum
// past 2^53 rounds, an overflowing i32 sum clamps). Comparisons are exact for
// integers (Max/Min, ArgMax/ArgMin, TopK), as ORT's are: an i64 above 2^53
// would round through double. Softmax subtracts the row maximum before exp.
// Float sums run in f32 under Accumulation::Storage (accumulation.h).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "core/ops/accumulation.h"
#include "core/ops/op_util.h"

namespace fuselens::ops {
namespace {

// ---- axes ----

// Sorted, unique, normalized axes; `all` when every axis is reduced.
struct AxesSpec {
  std::vector<bool> reduced;  // per input axis
  bool identity = false;      // empty axes with noop_with_empty_axes
};

Expected<AxesSpec> axesSpec(const Node& n, size_t rank,
                            const std::optional<std::vector<int64_t>>& axes) {
  AxesSpec s;
  s.reduced.assign(rank, false);
  if (!axes || axes->empty()) {
    if (n.attrs.getInt("noop_with_empty_axes", 0) != 0) {
      s.identity = true;
      return s;
    }
    s.reduced.assign(rank, true);
    return s;
  }
  for (int64_t a : *axes) {
    auto na = normalizeAxis(a, int64_t(rank));
    if (!na)
      return nodeError(
          n, "axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
    s.reduced[*na] = true;
  }
  return s;
}

Types inferReduce(const InferContext& c) {
  FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), 1, 2));
  const TensorType& x = c.inputTypes[0];
  bool keep = c.node.attrs.getInt("keepdims", 1) != 0;
  std::optional<std::vector<int64_t>> axes;
  if (typeAt(c, 1)) {
    const TensorData* a = constAt(c, 1);
    if (!a) {
      if (keep && x.rankKnown) {
        TensorType out = x;
        for (Dim& d : out.shape) d = Dim::unknown();
        return std::vector{out};
      }
      return std::vector{unknownRank(x.dtype)};
    }
    auto v = intsOf(c.node, *a, "axes");
    if (!v) return v.status();
    axes = *v;
  }
  if (!x.rankKnown) return std::vector{unknownRank(x.dtype)};
  auto spec = axesSpec(c.node, x.rank(), axes);
  if (!spec) return spec.status();
  if (spec->identity) return std::vector{x};
  TensorType out;
  out.dtype = x.dtype;
  for (size_t i = 0; i < x.rank(); ++i) {
    if (!spec->reduced[i])
      out.shape.push_back(x.shape[i]);
    else if (keep)
      out.shape.push_back(Dim::fixed(1));
  }
  return std::vector{out};
}

enum class Red { Sum, Mean, Max, Min, Prod, L1, L2, SumSquare, LogSum, LogSumExp };

double initial(Red r) {
  switch (r) {
    case Red::Max:
      return -INFINITY;
    case Red::Min:
      return INFINITY;
    case Red::Prod:
      return 1;
    default:
      return 0;
  }
}

// Integer Max/Min in int64, exactly; an empty reduction gives the dtype's
// bound (what storing -inf/+inf saturates to).
template <class ForEachIndex>
TensorData intExtremum(bool isMax, const TensorData& x, const std::vector<int64_t>& oshape,
                       int64_t outN, int64_t count, const ForEachIndex& forEachIndex) {
  std::vector<int64_t> acc(size_t(outN), isMax ? INT64_MIN : INT64_MAX);
  forEachIndex([&](int64_t o, int64_t i) {
    int64_t v = loadI(x, i);
    acc[size_t(o)] = isMax ? std::max(acc[size_t(o)], v) : std::min(acc[size_t(o)], v);
  });
  TensorData out(x.dtype, oshape);
  for (int64_t o = 0; o < outN; ++o) {
    if (count == 0)
      storeF(out, o, isMax ? -INFINITY : INFINITY);
    else
      storeI(out, o, acc[size_t(o)]);
  }
  return out;
}

EagerFn reduceKernel(Red red) {
  return [red](const Node& n, const Inputs& in) -> Outputs {
    FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 1, 2));
    const TensorData& x = *in[0];
    std::optional<std::vector<int64_t>> axes;
    if (const TensorData* a = inputAt(in, 1)) {
      auto v = intsOf(n, *a, "axes");
      if (!v) return v.status();
      axes = *v;
    }
    auto spec = axesSpec(n, x.rank(), axes);
    if (!spec) return spec.status();
    if (spec->identity) return std::vector{x};
    bool keep = n.attrs.getInt("keepdims", 1) != 0;
    // Accumulate into an output laid out with kept (size-1) dims.
    std::vector<int64_t> kshape, oshape;
    for (size_t i = 0; i < x.rank(); ++i) {
      kshape.push_back(spec->reduced[i] ? 1 : x.shape[i]);
      if (!spec->reduced[i] || keep) oshape.push_back(kshape.back());
    }
    int64_t outN = 1, count = 1;
    for (size_t i = 0; i < x.rank(); ++i) {
      outN *= kshape[i];
      if (spec->reduced[i]) count *= x.shape[i];
    }
    std::vector<double> acc(size_t(outN), initial(red));
    // LogSumExp subtracts each output's maximum first, for range.
    std::vector<double> mx(size_t(outN), -INFINITY);
    std::vector<int64_t> ks = broadcastStrides(kshape, x.shape);
    auto forEachIndex = [&](auto f) {
      std::vector<int64_t> idx(x.rank(), 0);
      for (int64_t i = 0; i < x.numel(); ++i) {
        int64_t o = 0;
        for (size_t d = 0; d < x.rank(); ++d) o += idx[d] * ks[d];
        f(o, i);
        nextIndex(idx, x.shape);
      }
    };
    auto forEach = [&](auto f) { forEachIndex([&](int64_t o, int64_t i) { f(o, x.at(i)); }); };
    if ((red == Red::Max || red == Red::Min) && isIntegral(x.dtype))
      return std::vector{intExtremum(red == Red::Max, x, oshape, outN, count, forEachIndex)};
    if (red == Red::LogSumExp) forEach([&](int64_t o, double v) { mx[o] = std::max(mx[o], v); });
    const bool narrow = sumsInF32(x.dtype);
    forEach([&](int64_t o, double v) {
      double& a = acc[o];
      switch (red) {
        case Red::Sum:
        case Red::Mean:
        case Red::LogSum:
          a = addTo(a, v, narrow);
          break;
        case Red::Max:
          a = std::isnan(v) || std::isnan(a) ? NAN : std::max(a, v);
          break;
        case Red::Min:
          a = std::isnan(v) || std::isnan(a) ? NAN : std::min(a, v);
          break;
        case Red::Prod:
          a *= v;
          break;
        case Red::L1:
          a = addTo(a, std::fabs(v), narrow);
          break;
        case Red::L2:
        case Red::SumSquare:
          a = addTo(a, v * v, narrow);
          break;
        case Red::LogSumExp:
          a = addTo(a, std::isinf(mx[o]) ? std::exp(v) : std::exp(v - mx[o]), narrow);
          break;
      }
    });
    TensorData out(x.dtype, oshape);
    for (int64_t o = 0; o < outN; ++o) {
      double a = acc[o];
      switch (red) {
        case Red::Mean:
          a = a / double(count);
          break;
        case Red::L2:
          a = std::sqrt(a);
          break;
        case Red::LogSum:
          a = std::log(a);
          break;
        case Red::LogSumExp:
          a = std::log(a) + (std::isinf(mx[o]) ? 0.0 : mx[o]);
          break;
        default:
          break;
      }
      if (isIntegral(x.dtype) && std::isinf(a))  // empty Max/Min over ints: the type's bound
        a = a < 0 ? -1e300 : 1e300;
      storeF(out, o, a);
    }
    return std::vector{std::move(out)};
  };
}

// ---- ArgMax / ArgMin ----

Types inferArg(const InferContext& c) {
  FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), 1, 1));
  const TensorType& x = c.inputTypes[0];
  if (!x.rankKnown) return std::vector{unknownRank(DType::I64)};
  int64_t axis = c.node.attrs.getInt("axis", 0);
  auto a = normalizeAxis(axis, int64_t(x.rank()));
  if (!a)
    return nodeError(c.node, "axis " + std::to_string(axis) + " is out of range for " + x.str());
  TensorType out;
  out.dtype = DType::I64;
  for (size_t i = 0; i < x.rank(); ++i) {
    if (int64_t(i) != *a)
      out.shape.push_back(x.shape[i]);
    else if (c.node.attrs.getInt("keepdims", 1))
      out.shape.push_back(Dim::fixed(1));
  }
  return std::vector{out};
}

// Views x as [outer, len, inner] around axis.
struct AxisView {
  int64_t outer = 1, len = 1, inner = 1;
};
AxisView viewAround(const std::vector<int64_t>& shape, int64_t axis) {
  AxisView v;
  for (int64_t d = 0; d < int64_t(shape.size()); ++d) {
    if (d < axis)
      v.outer *= shape[d];
    else if (d == axis)
      v.len = shape[d];
    else
      v.inner *= shape[d];
  }
  return v;
}

EagerFn argKernel(bool isMax) {
  return [isMax](const Node& n, const Inputs& in) -> Outputs {
    FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 1, 1));
    const TensorData& x = *in[0];
    int64_t axisAttr = n.attrs.getInt("axis", 0);
    auto axis = normalizeAxis(axisAttr, int64_t(x.rank()));
    if (!axis) return nodeError(n, "axis " + std::to_string(axisAttr) + " is out of range");
    AxisView v = viewAround(x.shape, *axis);
    if (v.len == 0) return nodeError(n, "cannot take the arg of an empty axis");
    bool last = n.attrs.getInt("select_last_index", 0) != 0;
    std::vector<int64_t> shape = x.shape;
    shape[*axis] = 1;
    if (!n.attrs.getInt("keepdims", 1)) shape.erase(shape.begin() + *axis);
    TensorData out(DType::I64, shape);
    // Integers compare as int64 (exact), floats as double.
    auto scan = [&](auto get) {
      for (int64_t o = 0; o < v.outer; ++o)
        for (int64_t i = 0; i < v.inner; ++i) {
          int64_t best = 0;
          auto bv = get(o * v.len * v.inner + i);
          for (int64_t k = 1; k < v.len; ++k) {
            auto e = get((o * v.len + k) * v.inner + i);
            bool better = isMax ? (e > bv || (last && e == bv)) : (e < bv || (last && e == bv));
            if (better) best = k, bv = e;
          }
          out.data<int64_t>()[o * v.inner + i] = best;
        }
    };
    if (isIntegral(x.dtype))
      scan([&](int64_t i) { return loadI(x, i); });
    else
      scan([&](int64_t i) { return x.at(i); });
    return std::vector{std::move(out)};
  };
}

// ---- Softmax / LogSoftmax ----

Types inferSoftmax(const InferContext& c) {
  FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), 1, 1));
  const TensorType& t = c.inputTypes[0];
  FL_RETURN_IF_ERROR(needFloat(c.node, t.dtype));
  int64_t axis = c.node.attrs.getInt("axis", -1);
  if (t.rankKnown && !normalizeAxis(axis, int64_t(t.rank())))
    return nodeError(c.node, "axis " + std::to_string(axis) + " is out of range for " + t.str());
  return std::vector{t};
}

EagerFn softmaxKernel(bool log) {
  return [log](const Node& n, const Inputs& in) -> Outputs {
    FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 1, 1));
    const TensorData& x = *in[0];
    FL_RETURN_IF_ERROR(needFloat(n, x.dtype));
    int64_t axisAttr = n.attrs.getInt("axis", -1);
    auto axis = normalizeAxis(axisAttr, int64_t(x.rank()));
    if (!axis)
      return nodeError(n, "axis " + std::to_string(axisAttr) + " is out of range for shape " +
                              shapeStr(x.shape));
    AxisView v = viewAround(x.shape, *axis);
    TensorData out(x.dtype, x.shape);
    const bool narrow = sumsInF32(x.dtype);
    for (int64_t a = 0; a < v.outer; ++a)
      for (int64_t b = 0; b < v.inner; ++b) {
        const int64_t base = a * v.len * v.inner + b;
        double mx = -INFINITY;
        for (int64_t i = 0; i < v.len; ++i) mx = std::fmax(mx, x.at(base + i * v.inner));
        double sum = 0;
        for (int64_t i = 0; i < v.len; ++i)
          sum = addTo(sum, std::exp(x.at(base + i * v.inner) - mx), narrow);
        for (int64_t i = 0; i < v.len; ++i) {
          double e = x.at(base + i * v.inner) - mx;
          storeF(out, base + i * v.inner, log ? e - std::log(sum) : std::exp(e) / sum);
        }
      }
    return std::vector{std::move(out)};
  };
}

// ---- CumSum ----

Types inferSame(const InferContext& c) {
  if (c.inputTypes.empty()) return nodeError(c.node, "expects an input");
  return std::vector{c.inputTypes[0]};
}

Outputs cumsumKernel(const Node& n, const Inputs& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 2, 2));
  const TensorData& x = *in[0];
  auto ax = scalarOf(n, *in[1], "axis");
  if (!ax) return ax.status();
  auto axis = normalizeAxis(int64_t(*ax), int64_t(x.rank()));
  if (!axis) return nodeError(n, "axis " + std::to_string(int64_t(*ax)) + " is out of range");
  bool excl = n.attrs.getInt("exclusive", 0) != 0, rev = n.attrs.getInt("reverse", 0) != 0;
  AxisView v = viewAround(x.shape, *axis);
  TensorData out(x.dtype, x.shape);
  bool fl = isFloat(x.dtype);
  for (int64_t o = 0; o < v.outer; ++o)
    for (int64_t i = 0; i < v.inner; ++i) {
      double sf = 0;
      int64_t si = 0;
      for (int64_t s = 0; s < v.len; ++s) {
        int64_t k = rev ? v.len - 1 - s : s;
        int64_t at = (o * v.len + k) * v.inner + i;
        if (excl) fl ? storeF(out, at, sf) : storeI(out, at, si);
        if (fl)
          sf += x.at(at);
        else
          si = int64_t(uint64_t(si) + uint64_t(loadI(x, at)));  // wraps, as ORT's does
        if (!excl) fl ? storeF(out, at, sf) : storeI(out, at, si);
      }
    }
  return std::vector{std::move(out)};
}

// ---- TopK ----

Types inferTopK(const InferContext& c) {
  FL_RETURN_IF_ERROR(checkInputCount(c.node, c.inputTypes.size(), 2, 2));
  const TensorType& x = c.inputTypes[0];
  TensorType vals = x, idx = x;
  idx.dtype = DType::I64;
  if (x.rankKnown) {
    int64_t axis = c.node.attrs.getInt("axis", -1);
    auto a = normalizeAxis(axis, int64_t(x.rank()));
    if (!a)
      return nodeError(c.node, "axis " + std::to_string(axis) + " is out of range for " + x.str());
    Dim k = Dim::unknown();
    if (const TensorData* kt = constAt(c, 1)) {
      auto kv = scalarOf(c.node, *kt, "K");
      if (!kv) return kv.status();
      k = Dim::fixed(int64_t(*kv));
    }
    vals.shape[*a] = idx.shape[*a] = k;
  }
  return std::vector{vals, idx};
}

Outputs topkKernel(const Node& n, const Inputs& in) {
  FL_RETURN_IF_ERROR(checkInputCount(n, in.size(), 2, 2));
  const TensorData& x = *in[0];
  auto kv = scalarOf(n, *in[1], "K");
  if (!kv) return kv.status();
  int64_t k = int64_t(*kv);
  int64_t axisAttr = n.attrs.getInt("axis", -1);
  auto axis = normalizeAxis(axisAttr, int64_t(x.rank()));
  if (!axis) return nodeError(n, "axis " + std::to_string(axisAttr) + " is out of range");
  AxisView v = viewAround(x.shape, *axis);
  if (k < 0 || k > v.len)
    return nodeError(n,
                     "K=" + std::to_string(k) + " is outside [0, " + std::to_string(v.len) + "]");
  bool largest = n.attrs.getInt("largest", 1) != 0;
  std::vector<int64_t> shape = x.shape;
  shape[*axis] = k;
  TensorData vals(x.dtype, shape), idx(DType::I64, shape);
  size_t es = dtypeSize(x.dtype);
  std::vector<int64_t> order(size_t(v.len));
  for (int64_t o = 0; o < v.outer; ++o)
    for (int64_t i = 0; i < v.inner; ++i) {
      auto at = [&](int64_t j) { return (o * v.len + j) * v.inner + i; };
      std::iota(order.begin(), order.end(), 0);
      // Ties keep the lower index first, as ORT does. Integers compare exactly.
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        if (isIntegral(x.dtype)) {
          int64_t ia = loadI(x, at(a)), ib = loadI(x, at(b));
          return largest ? ia > ib : ia < ib;
        }
        // NaN ranks as the greatest value (first when largest, last when
        // smallest), as ONNX Runtime orders it; NaNs tie among themselves.
        // Plain compares would not be a strict weak order for the sort.
        double va = x.at(at(a)), vb = x.at(at(b));
        bool na = std::isnan(va), nb = std::isnan(vb);
        if (na || nb) return largest ? na && !nb : !na && nb;
        return largest ? va > vb : va < vb;
      });
      for (int64_t j = 0; j < k; ++j) {
        int64_t dst = (o * k + j) * v.inner + i;
        std::memcpy(vals.bytes.data() + dst * es, x.bytes.data() + at(order[j]) * es, es);
        idx.data<int64_t>()[dst] = order[j];
      }
    }
  return std::vector{std::move(vals), std::move(idx)};
}

}  // namespace

void registerReduceOps(OpRegistry& r) {
  const auto C = PatternKind::CommReduce;
  const std::pair<const char*, Red> reductions[] = {
      {"ReduceSum", Red::Sum},       {"ReduceMean", Red::Mean},
      {"ReduceMax", Red::Max},       {"ReduceMin", Red::Min},
      {"ReduceProd", Red::Prod},     {"ReduceL1", Red::L1},
      {"ReduceL2", Red::L2},         {"ReduceSumSquare", Red::SumSquare},
      {"ReduceLogSum", Red::LogSum}, {"ReduceLogSumExp", Red::LogSumExp}};
  for (const auto& [name, red] : reductions)
    r.add(OpInfo{name, "", C, inferReduce, reduceKernel(red)});
  r.add(OpInfo{"ArgMax", "", C, inferArg, argKernel(true)});
  r.add(OpInfo{"ArgMin", "", C, inferArg, argKernel(false)});
  r.add(OpInfo{"Softmax", "", C, inferSoftmax, softmaxKernel(false)});
  r.add(OpInfo{"LogSoftmax", "", C, inferSoftmax, softmaxKernel(true)});
  // A scan and a sort: nothing fuses into or out of them (TVM marks both Opaque).
  r.add(OpInfo{"CumSum", "", PatternKind::Opaque, inferSame, cumsumKernel});
  r.add(OpInfo{"TopK", "", PatternKind::Opaque, inferTopK, topkKernel});
}

}  // namespace fuselens::ops
