// Verdicts for a compiled run that stores tensors between kernels in f16 or
// bf16 on purpose (--precision; passes/reduce_precision.h). An f16 tensor
// cannot be closer to the exact value than f16 allows, and a kernel fed f16
// inputs inherits their rounding, so every float element's expected error is
// at least one ulp of the storage precision P:
//
//   e_i = max(|sample_i - exact_i|, |other_i - exact_i|, ulp_P(exact_i))
//
// rounding.h stays the f32 entry point; this adds the storage to it.
#pragma once

#include <string>

#include "core/compare/rounding.h"
#include "core/ir/graph.h"

namespace fuselens {

// checkRounding with the floor of `storage` (F32: checkRounding itself).
RoundingCheck checkRoundingStored(DType storage, const TensorData& exact, const TensorData& sample,
                                  const Layout& referenceLayout, const TensorData& actual,
                                  const Layout& actualLayout, const CompareOptions& opts,
                                  const TensorData* other = nullptr);

// The storage precision the compiled graph `g` chose for tensors of `original`
// (the graph its origins name): f16 or bf16 when a value of g holds a tensor
// whose origin is f32 in that dtype, else F32.
DType storagePrecision(const Graph& original, const Graph& g);

// opts.describe() naming the storage when it is not f32:
// "(max error against the f64 reference, margin 8×, f16 storage)".
std::string describeStored(const CompareOptions& opts, DType storage);

}  // namespace fuselens
