// Schedules: how a LoopFunc's loops run, kept apart from what they compute.
// Lowering emits every loop Serial; a Schedule then marks loop kinds, which the
// backend honors (Parallel: the loop body is outlined and split across the
// thread pool; Vectorized / Unrolled: LLVM loop hints). The default preset,
// on a MatMul [64,128] x [128,256] + bias + Relu kernel:
//
//   for (int64 i0 = 0; i0 < 64; ++i0) {          // parallel   (outermost, enough work)
//     for (int64 i1 = 0; i1 < 256; ++i1) {
//       float acc0 = 0.0f;
//       for (int64 i2 = 0; i2 < 128; ++i2) {     // serial     (a reduction into acc0)
//         acc0 = acc0 + x[i0 * 128 + i2] * w[i2 * 256 + i1];
//       }
//       y[i0 * 256 + i1] = max(acc0 + b[i1], 0.0f);
//     }
//   }
//
// and an innermost loop whose stores are contiguous in its counter becomes
// `// vectorized`.
#pragma once

#include <optional>
#include <string>

#include "codegen/loop_ir.h"

namespace fuselens {

struct Schedule {
  std::string name = "default";
  bool parallelOuter = true;          // outermost loop of a nest runs on the thread pool...
  int64_t parallelMinWork = 1 << 15;  // ...when the nest runs at least this many iterations
  bool vectorizeInner = true;         // contiguous innermost loops get a vectorize hint

  static Schedule defaults() { return Schedule{}; }
  static Schedule serial() { return Schedule{"serial", false, 0, false}; }
};

// Sets the For kinds of f's loops (lowering leaves them all Serial).
void applySchedule(LoopFunc& f, const Schedule& s);

// The stride of `index` in loop counter v when it is affine in v; nullopt otherwise.
std::optional<int64_t> strideIn(const ExprRef& index, VarId v);

}  // namespace fuselens
