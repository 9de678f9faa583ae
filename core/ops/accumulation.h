// How the reference's sums run: contractions (Conv, ConvTranspose, MatMul,
// Gemm) and reductions (pools, Reduce*, Softmax, the normalizations' mean and
// variance). Wide, the reference proper, sums in double and rounds once per
// output. Storage sums f32 tensors in f32, one rounding per product and per
// add, in the kernel's plain loop order, as compiled f32 code sums: the rounding-aware
// compare runs the reference so once to see how far f32 summation alone moves
// every tensor (docs/numerics.md). A per-thread setting rather than a kernel
// argument, so the registry's (node, inputs) kernels keep their signature;
// runEager sets it for the duration of a run.
#pragma once

#include "core/ir/dtype.h"

namespace fuselens {

enum class Accumulation { Wide, Storage };

Accumulation eagerAccumulation();

// Whether sums over tensors of dtype `t` are rounded to f32 after every add:
// Storage, for f32/f16/bf16 data (never f64 or integers, which sum exactly).
inline bool sumsInF32(DType t) {
  return eagerAccumulation() == Accumulation::Storage &&
         (t == DType::F32 || t == DType::F16 || t == DType::BF16);
}
// acc + v, rounded to f32 when `narrow`: the double accumulators of the
// reduction kernels then hold exactly what an f32 accumulator would.
inline double addTo(double acc, double v, bool narrow) {
  return narrow ? double(float(acc + v)) : acc + v;
}

class ScopedAccumulation {
 public:
  explicit ScopedAccumulation(Accumulation a);
  ~ScopedAccumulation();
  ScopedAccumulation(const ScopedAccumulation&) = delete;
  ScopedAccumulation& operator=(const ScopedAccumulation&) = delete;

 private:
  Accumulation saved_;
};

}  // namespace fuselens
