#include "core/ir/dtype.h"

#include <array>

namespace fuselens {
namespace {
struct DTypeRow {
  DType type;
  std::string_view name;
  size_t size;
};
constexpr std::array<DTypeRow, 10> kRows{{{DType::F32, "f32", 4},
                                          {DType::F16, "f16", 2},
                                          {DType::BF16, "bf16", 2},
                                          {DType::F64, "f64", 8},
                                          {DType::I8, "i8", 1},
                                          {DType::U8, "u8", 1},
                                          {DType::I16, "i16", 2},
                                          {DType::I32, "i32", 4},
                                          {DType::I64, "i64", 8},
                                          {DType::Bool, "bool", 1}}};
}  // namespace

std::string_view dtypeName(DType t) { return kRows[static_cast<size_t>(t)].name; }
size_t dtypeSize(DType t) { return kRows[static_cast<size_t>(t)].size; }
bool isFloat(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16 || t == DType::F64;
}
std::optional<DType> parseDType(std::string_view name) {
  for (const auto& r : kRows)
    if (r.name == name) return r.type;
  return std::nullopt;
}

}  // namespace fuselens
