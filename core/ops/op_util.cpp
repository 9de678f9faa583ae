// Shared helpers of the op-family files: broadcasting, strides, index loops
// and node-located errors (see op_util.h).
#include "core/ops/op_util.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace fuselens::ops {

Status checkInputCount(const Node& n, size_t count, size_t min, size_t max) {
  if (count < min || count > max) {
    std::string want =
        min == max ? std::to_string(min) : std::to_string(min) + " to " + std::to_string(max);
    return nodeError(n, "expects " + want + " inputs, got " + std::to_string(count));
  }
  for (size_t i = 0; i < min; ++i)
    if (!n.inputs[i].valid())
      return nodeError(n, "required input " + std::to_string(i) + " is missing");
  return Status::ok();
}

std::string shapeStr(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string dimsStr(const std::vector<Dim>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + shape[i].str();
  return s + "]";
}

Expected<std::vector<Dim>> broadcastDims(const Node& n, const std::vector<Dim>& a,
                                         const std::vector<Dim>& b) {
  size_t rank = std::max(a.size(), b.size());
  std::vector<Dim> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Right-aligned: a missing leading dim behaves as 1.
    Dim da = i < rank - a.size() ? Dim::fixed(1) : a[i - (rank - a.size())];
    Dim db = i < rank - b.size() ? Dim::fixed(1) : b[i - (rank - b.size())];
    if (da.isStatic() && db.isStatic()) {
      if (da.value != db.value && da.value != 1 && db.value != 1)
        return nodeError(n, "shapes " + dimsStr(a) + " and " + dimsStr(b) +
                                " cannot be broadcast (dimension " + std::to_string(i) + ": " +
                                da.str() + " vs " + db.str() + ")");
      out[i] = da.value == 1 ? db : da;
    } else if (da.isStatic() && da.value == 1) {
      out[i] = db;
    } else if (db.isStatic() && db.value == 1) {
      out[i] = da;
    } else if (da.isStatic() || db.isStatic()) {
      // A symbol against N > 1: the symbol must be 1 or N at run time; either way N.
      out[i] = da.isStatic() ? da : db;
    } else if (da == db && !da.symbol.empty()) {
      out[i] = da;
    } else {
      out[i] = Dim::unknown();
    }
  }
  return out;
}

Expected<std::vector<int64_t>> broadcastShapes(const Node& n, const std::vector<int64_t>& a,
                                               const std::vector<int64_t>& b) {
  std::vector<Dim> da, db;
  for (int64_t d : a) da.push_back(Dim::fixed(d));
  for (int64_t d : b) db.push_back(Dim::fixed(d));
  auto out = broadcastDims(n, da, db);
  if (!out) return out.status();
  std::vector<int64_t> s;
  for (const Dim& d : *out) s.push_back(d.value);
  return s;
}

std::vector<int64_t> rowMajorStrides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> st(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) st[i - 1] = st[i] * shape[i];
  return st;
}

std::vector<int64_t> broadcastStrides(const std::vector<int64_t>& in,
                                      const std::vector<int64_t>& out) {
  std::vector<int64_t> inStrides = rowMajorStrides(in);
  std::vector<int64_t> st(out.size(), 0);
  size_t lead = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) st[lead + i] = in[i] == 1 ? 0 : inStrides[i];
  return st;
}

bool nextIndex(std::vector<int64_t>& idx, const std::vector<int64_t>& shape) {
  for (size_t i = shape.size(); i-- > 0;) {
    if (++idx[i] < shape[i]) return true;
    idx[i] = 0;
  }
  return false;
}

std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

bool isIntegral(DType t) { return !isFloat(t); }

std::vector<Dim> staticDims(const std::vector<int64_t>& shape) {
  std::vector<Dim> d;
  for (int64_t v : shape) d.push_back(Dim::fixed(v));
  return d;
}

Status checkAllocatable(const Node& n, const std::vector<int64_t>& shape, DType t) {
  uint64_t bytes = dtypeSize(t);
  for (int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(bytes, uint64_t(d), &bytes) || bytes > (uint64_t(1) << 34))
      return nodeError(n, "the output shape " + shapeStr(shape) + " is negative or too large");
  return Status::ok();
}

std::string dtypeStr(DType t) { return std::string(dtypeName(t)); }

Status needFloat(const Node& n, DType t) {
  if (isFloat(t)) return Status::ok();
  return nodeError(n, "needs a floating-point input, got " + dtypeStr(t));
}

uint16_t floatToHalf(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t absx = x & 0x7fffffffu;
  if (absx > 0x7f800000u) return uint16_t(sign | 0x7e00u);   // NaN
  if (absx >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // rounds to inf
  if (absx < 0x38800000u) {                                  // subnormal or zero in f16
    // Scale into the subnormal range exactly, then round to nearest even.
    float a = std::bit_cast<float>(absx);
    float scaled = a * 16777216.0f;  // 2^24: one f16 subnormal ulp becomes 1
    return uint16_t(sign | uint32_t(std::nearbyint(scaled)));
  }
  uint32_t mant = absx & 0x7fffffu;
  uint32_t exp = (absx >> 23) - 127 + 15;
  uint32_t h = (exp << 10) | (mant >> 13);
  uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1))) ++h;  // nearest even; may carry into exp
  return uint16_t(sign | h);
}

uint16_t floatToBf16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40u);  // quiet NaN
  x += 0x7fffu + ((x >> 16) & 1);                                           // round to nearest even
  return uint16_t(x >> 16);
}

namespace {
template <class I>
I saturate(double v) {
  if (std::isnan(v)) return 0;
  if (v <= double(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  if (v >= double(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  return static_cast<I>(v);
}
}  // namespace

int64_t loadI(const TensorData& t, int64_t i) {
  switch (t.dtype) {
    case DType::I8:
      return t.data<int8_t>()[i];
    case DType::U8:
      return t.data<uint8_t>()[i];
    case DType::I16:
      return t.data<int16_t>()[i];
    case DType::I32:
      return t.data<int32_t>()[i];
    case DType::I64:
      return t.data<int64_t>()[i];
    case DType::Bool:
      return t.data<uint8_t>()[i] != 0;
    default:
      return saturate<int64_t>(t.at(i));
  }
}

void storeF(TensorData& t, int64_t i, double v) {
  switch (t.dtype) {
    case DType::F32:
      t.data<float>()[i] = float(v);
      break;
    case DType::F64:
      t.data<double>()[i] = v;
      break;
    // Through f32 first, as ORT's MLFloat16(float) does.
    case DType::F16:
      t.data<uint16_t>()[i] = floatToHalf(float(v));
      break;
    case DType::BF16:
      t.data<uint16_t>()[i] = floatToBf16(float(v));
      break;
    case DType::I8:
      t.data<int8_t>()[i] = saturate<int8_t>(v);
      break;
    case DType::U8:
      t.data<uint8_t>()[i] = saturate<uint8_t>(v);
      break;
    case DType::I16:
      t.data<int16_t>()[i] = saturate<int16_t>(v);
      break;
    case DType::I32:
      t.data<int32_t>()[i] = saturate<int32_t>(v);
      break;
    case DType::I64:
      t.data<int64_t>()[i] = saturate<int64_t>(v);
      break;
    case DType::Bool:
      t.data<uint8_t>()[i] = v != 0;
      break;
  }
}

void storeI(TensorData& t, int64_t i, int64_t v) {
  switch (t.dtype) {
    case DType::I8:
      t.data<int8_t>()[i] = int8_t(v);
      break;
    case DType::U8:
      t.data<uint8_t>()[i] = uint8_t(v);
      break;
    case DType::I16:
      t.data<int16_t>()[i] = int16_t(v);
      break;
    case DType::I32:
      t.data<int32_t>()[i] = int32_t(v);
      break;
    case DType::I64:
      t.data<int64_t>()[i] = v;
      break;
    case DType::Bool:
      t.data<uint8_t>()[i] = v != 0;
      break;
    default:
      storeF(t, i, double(v));
      break;
  }
}

TensorData castTensor(const TensorData& t, DType to) {
  if (t.dtype == to) return t;
  TensorData out(to, t.shape);
  int64_t n = t.numel();
  if (isIntegral(t.dtype) && isIntegral(to)) {
    for (int64_t i = 0; i < n; ++i) storeI(out, i, loadI(t, i));
  } else if (isFloat(t.dtype) && isIntegral(to) && to != DType::Bool) {
    // ONNX Runtime truncates toward zero and keeps the low bits (x86's
    // float->int64 then a narrowing cast): -2.7 -> u8 254.
    for (int64_t i = 0; i < n; ++i) storeI(out, i, saturate<int64_t>(t.at(i)));
  } else if (t.dtype == DType::I64 && isFloat(to)) {
    for (int64_t i = 0; i < n; ++i) storeF(out, i, double(t.data<int64_t>()[i]));
  } else {
    for (int64_t i = 0; i < n; ++i) storeF(out, i, t.at(i));
  }
  return out;
}

Expected<std::vector<int64_t>> intsOf(const Node& n, const TensorData& t, const std::string& what) {
  if ((t.dtype != DType::I64 && t.dtype != DType::I32) || t.rank() > 1)
    return nodeError(n, what + " must be a 1-D i64 or i32 tensor, got " + t.type().str());
  std::vector<int64_t> v(size_t(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[size_t(i)] = loadI(t, i);
  return v;
}

Expected<double> scalarOf(const Node& n, const TensorData& t, const std::string& what) {
  if (t.numel() != 1) return nodeError(n, what + " must hold one element, got " + t.type().str());
  return t.at(0);
}

std::optional<DType> dtypeOfOnnxEnum(int64_t e) {
  switch (e) {
    case 1:
      return DType::F32;
    case 2:
      return DType::U8;
    case 3:
      return DType::I8;
    case 5:
      return DType::I16;
    case 6:
      return DType::I32;
    case 7:
      return DType::I64;
    case 9:
      return DType::Bool;
    case 10:
      return DType::F16;
    case 11:
      return DType::F64;
    case 16:
      return DType::BF16;
    default:
      return std::nullopt;
  }
}

std::optional<std::vector<int64_t>> constInts(const InferContext& c, size_t i) {
  const TensorData* t = typeAt(c, i) ? constAt(c, i) : nullptr;
  if (!t || (t->dtype != DType::I64 && t->dtype != DType::I32) || t->rank() > 1)
    return std::nullopt;
  std::vector<int64_t> v;
  for (int64_t k = 0; k < t->numel(); ++k) v.push_back(loadI(*t, k));
  return v;
}

void copyElem(TensorData& dst, int64_t di, const TensorData& src, int64_t si) {
  size_t es = dtypeSize(src.dtype);
  std::memcpy(dst.bytes.data() + di * es, src.bytes.data() + si * es, es);
}

Expected<int64_t> axisOf(const Node& n, int64_t rank, int64_t fallback, bool inclusive) {
  int64_t a = n.attrs.getInt("axis", fallback);
  auto na = normalizeAxis(a, rank + (inclusive ? 1 : 0));
  if (!na && !(inclusive && a == rank))
    return nodeError(
        n, "axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
  return na ? *na : a;
}

EagerFn computeHalfInF32(EagerFn f) {
  return [f](const Node& n, const Inputs& in) -> Outputs {
    std::optional<DType> half;
    for (const TensorData* t : in)
      if (t && (t->dtype == DType::F16 || t->dtype == DType::BF16)) half = t->dtype;
    if (!half) return f(n, in);
    std::vector<TensorData> widened;
    widened.reserve(in.size());
    Inputs in32;
    for (const TensorData* t : in) {
      if (t && t->dtype == *half) {
        widened.push_back(castTensor(*t, DType::F32));
        in32.push_back(&widened.back());
      } else {
        in32.push_back(t);
      }
    }
    auto outs = f(n, in32);
    if (!outs) return outs;
    for (TensorData& o : *outs)
      if (o.dtype == DType::F32) o = castTensor(o, *half);
    return outs;
  };
}

}  // namespace fuselens::ops
