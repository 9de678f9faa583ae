#include "core/ir/tensor.h"

#include <bit>
#include <new>

namespace fuselens {

namespace {
constexpr size_t kAlignFrom = 1024;
constexpr std::align_val_t kCacheLine{64};
}  // namespace

void* allocateTensorBytes(size_t n) {
  return n >= kAlignFrom ? ::operator new(n, kCacheLine) : ::operator new(n);
}

// Unsized deletes: clang before 19 does not declare the sized ones unless
// -fsized-deallocation is on (the fuzz build uses clang).
void freeTensorBytes(void* p, size_t n) {
  if (n >= kAlignFrom)
    ::operator delete(p, kCacheLine);
  else
    ::operator delete(p);
}

namespace {
float halfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: renormalize
      exp = 127 - 15 + 1;
      while (!(mant & 0x400)) {
        mant <<= 1;
        --exp;
      }
      bits = sign | (exp << 23) | ((mant & 0x3ff) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  return std::bit_cast<float>(bits);
}
}  // namespace

double TensorData::at(int64_t i) const {
  switch (dtype) {
    case DType::F32:
      return data<float>()[i];
    case DType::F64:
      return data<double>()[i];
    case DType::F16:
      return halfToFloat(data<uint16_t>()[i]);
    case DType::BF16:
      return std::bit_cast<float>(uint32_t(data<uint16_t>()[i]) << 16);
    case DType::I8:
      return data<int8_t>()[i];
    case DType::U8:
      return data<uint8_t>()[i];
    case DType::I16:
      return data<int16_t>()[i];
    case DType::I32:
      return data<int32_t>()[i];
    case DType::I64:
      return static_cast<double>(data<int64_t>()[i]);
    case DType::Bool:
      return data<uint8_t>()[i] ? 1.0 : 0.0;
  }
  return 0.0;
}

}  // namespace fuselens
