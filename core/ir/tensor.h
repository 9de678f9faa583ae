// A dense, row-major tensor with its bytes. Constants in a Graph hold
// shared_ptr<const TensorData>, so cloning a graph for a snapshot copies no
// weights; the eager interpreter and the executors pass TensorData around.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/ir/dtype.h"
#include "core/ir/tensor_type.h"

namespace fuselens {

// Tensor bytes of 1 KiB and more start on a cache line: kernels load 64-byte
// vectors, and a vector that straddles two lines costs two loads (a MatMul
// reading its packed weights from malloc's 16-byte aligned blocks ran 12%
// slower). Smaller tensors keep malloc's cheaper path: the eager interpreter
// (and the host kernels built on it) makes many, and an aligned allocation
// costs about three times as much.
void* allocateTensorBytes(size_t n);
void freeTensorBytes(void* p, size_t n);

template <class T>
struct CacheLineAllocator {
  using value_type = T;
  CacheLineAllocator() = default;
  template <class U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}
  T* allocate(size_t n) { return static_cast<T*>(allocateTensorBytes(n * sizeof(T))); }
  void deallocate(T* p, size_t n) { freeTensorBytes(p, n * sizeof(T)); }
  template <class U>
  bool operator==(const CacheLineAllocator<U>&) const {
    return true;
  }
};

using TensorBytes = std::vector<std::byte, CacheLineAllocator<std::byte>>;

struct TensorData {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  TensorBytes bytes;

  TensorData() = default;
  TensorData(DType t, std::vector<int64_t> s) : dtype(t), shape(std::move(s)) {
    bytes.resize(static_cast<size_t>(numel()) * dtypeSize(dtype));
  }
  template <class T>
  static TensorData fromVector(DType t, std::vector<int64_t> s, const std::vector<T>& v) {
    TensorData d(t, std::move(s));
    // memcpy with a null pointer is undefined even for zero bytes (UBSan), and an
    // empty tensor has empty vectors.
    if (!d.bytes.empty()) std::memcpy(d.bytes.data(), v.data(), d.bytes.size());
    return d;
  }

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
  size_t rank() const { return shape.size(); }
  TensorType type() const { return TensorType::of(dtype, shape); }
  template <class T>
  T* data() {
    return reinterpret_cast<T*>(bytes.data());
  }
  template <class T>
  const T* data() const {
    return reinterpret_cast<const T*>(bytes.data());
  }
  // Element i converted to double, whatever the dtype (for compare and printing).
  double at(int64_t i) const;
};

}  // namespace fuselens
