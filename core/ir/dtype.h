// Element types of tensors, with their text names ("f32") and byte sizes.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace fuselens {

enum class DType { F32, F16, BF16, F64, I8, U8, I16, I32, I64, Bool };

std::string_view dtypeName(DType t);                     // "f32"
std::optional<DType> parseDType(std::string_view name);  // inverse of dtypeName
size_t dtypeSize(DType t);
bool isFloat(DType t);

}  // namespace fuselens
