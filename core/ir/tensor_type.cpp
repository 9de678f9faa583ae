#include "core/ir/tensor_type.h"

namespace fuselens {

std::string Dim::str() const {
  if (isStatic()) return std::to_string(value);
  return symbol.empty() ? "?" : symbol;
}

TensorType TensorType::of(DType t, const std::vector<int64_t>& dims) {
  TensorType tt;
  tt.dtype = t;
  for (int64_t d : dims) tt.shape.push_back(Dim::fixed(d));
  return tt;
}

bool TensorType::isStatic() const {
  if (!rankKnown) return false;
  for (const Dim& d : shape)
    if (!d.isStatic()) return false;
  return true;
}

std::optional<std::vector<int64_t>> TensorType::staticShape() const {
  if (!isStatic()) return std::nullopt;
  std::vector<int64_t> out;
  for (const Dim& d : shape) out.push_back(d.value);
  return out;
}

std::optional<int64_t> TensorType::numElements() const {
  auto s = staticShape();
  if (!s) return std::nullopt;
  int64_t n = 1;
  for (int64_t d : *s) n *= d;
  return n;
}

std::string TensorType::str() const {
  std::string s(dtypeName(dtype));
  if (!rankKnown) return s + "[*]";
  s += "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ",";
    s += shape[i].str();
  }
  return s + "]";
}

std::string formatShape(const std::vector<int64_t>& shape) {
  std::string t = "[";
  for (size_t i = 0; i < shape.size(); ++i) t += (i ? "," : "") + std::to_string(shape[i]);
  return t + "]";
}

}  // namespace fuselens
