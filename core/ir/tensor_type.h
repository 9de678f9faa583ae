// The static type of a value: element type and shape, where each dimension is
// a number, a symbol such as `seq` (bound at run time), or unknown.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/dtype.h"

namespace fuselens {

struct Dim {
  int64_t value = -1;  // >= 0 when static
  std::string symbol;  // non-empty for a named dynamic dim; both empty/-1 means unknown

  static Dim fixed(int64_t v) { return Dim{v, {}}; }
  static Dim named(std::string s) { return Dim{-1, std::move(s)}; }
  static Dim unknown() { return Dim{}; }
  bool isStatic() const { return value >= 0; }
  bool operator==(const Dim& o) const { return value == o.value && symbol == o.symbol; }
  bool operator!=(const Dim& o) const { return !(*this == o); }
  std::string str() const;  // "128", "seq", "?"
};

struct TensorType {
  DType dtype = DType::F32;
  std::vector<Dim> shape;
  bool rankKnown = true;  // false: shape is meaningless (rank not inferred yet)

  static TensorType of(DType t, const std::vector<int64_t>& dims);
  size_t rank() const { return shape.size(); }
  bool isStatic() const;
  // Static dims as numbers; nullopt when any dim is dynamic or rank unknown.
  std::optional<std::vector<int64_t>> staticShape() const;
  std::optional<int64_t> numElements() const;
  bool operator==(const TensorType& o) const {
    return dtype == o.dtype && shape == o.shape && rankKnown == o.rankKnown;
  }
  bool operator!=(const TensorType& o) const { return !(*this == o); }
  std::string str() const;  // "f32[1,128]", "f32[seq,64]", "f32[*]" for unknown rank
};

// "[1,128]" — static shapes in diagnostics.
std::string formatShape(const std::vector<int64_t>& shape);

}  // namespace fuselens
