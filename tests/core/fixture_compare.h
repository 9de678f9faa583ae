// Comparing a fixture's tensors: the tolerance each fixture family meets
// against ONNX Runtime (the eager reference's bounds, which the compiled code
// must also meet against eager) and a one-sentence description of the first
// mismatch. Shared by eager_test, codegen_fixtures_test and
// codegen_control_flow_test.
#pragma once

#include <cmath>
#include <cstring>
#include <iterator>
#include <sstream>
#include <string>

#include "core/ir/tensor.h"

namespace fuselens::test {

struct FamilyTolerance {
  const char* prefix;
  double atol, rtol;
};
// First matching prefix wins.
inline const FamilyTolerance kTolerances[] = {
    // Sums of K products: ORT adds float partial sums in a blocked order, the
    // reference sums in double, so the last bits differ and grow with K.
    {"matmul", 1e-4, 1e-4},
    {"gemm", 1e-4, 1e-4},
    {"dyn_batch", 1e-4, 1e-4},
    {"samples/", 1e-4, 1e-4},
    // exp of each element plus a sum over the axis; ORT's exp is a fast
    // polynomial, accurate to a few float ulps.
    {"softmax", 1e-5, 1e-5},
    // f16: ORT widens to f32 and rounds the result to f16 once, as the
    // reference does; ORT's f16 MatMul/Conv round partial sums, so one f16 ulp
    // (2^-10 relative) and a little more separate the two.
    {"f16_", 4e-3, 4e-3},
    // Long sums (windows, channels, time steps through tanh/sigmoid): ORT sums
    // in float with MLAS's blocked order and approximated activations.
    {"conv", 1e-4, 1e-4},
    {"pool", 1e-5, 1e-5},
    {"einsum", 1e-4, 1e-4},
    {"norm", 1e-4, 1e-4},
    {"rnn", 1e-4, 1e-4},
    // Interpolation weights are products of two or four float factors.
    {"resize", 1e-5, 1e-5},
    // Quantization is integer-exact: both round x/scale (in f32) half to even.
    {"quant_quantize", 0, 0},
    // Elementwise ops: one rounding each (transcendentals a few ulps); shape
    // ops and integer ops are exact and pass any tolerance.
    {"", 1e-5, 1e-5},
};

inline FamilyTolerance toleranceFor(const std::string& name) {
  for (const auto& t : kTolerances)
    if (name.rfind(t.prefix, 0) == 0) return t;
  return kTolerances[std::size(kTolerances) - 1];
}

// Empty when equal within tolerance, else a sentence about the first mismatch
// ("element 3: 0.5 vs eager 0.25"; `refName` names the reference side).
inline std::string mismatch(const TensorData& ref, const TensorData& got, double atol, double rtol,
                            const std::string& refName = "reference") {
  if (ref.dtype != got.dtype)
    return "dtype " + std::string(dtypeName(got.dtype)) + " vs " +
           std::string(dtypeName(ref.dtype));
  if (ref.shape != got.shape) return "shape " + got.type().str() + " vs " + ref.type().str();
  // Integers compare exactly: through double, i64 values past 2^53 would round.
  const size_t w = dtypeSize(ref.dtype);
  for (int64_t i = 0; !isFloat(ref.dtype) && i < ref.numel(); ++i)
    if (std::memcmp(ref.bytes.data() + i * w, got.bytes.data() + i * w, w) != 0)
      return "element " + std::to_string(i) + " differs from the " + refName +
             " (integers are exact)";
  for (int64_t i = 0; i < ref.numel(); ++i) {
    double r = ref.at(i), g = got.at(i);
    if (std::isnan(r) && std::isnan(g)) continue;
    if (!(std::fabs(r - g) <= atol + rtol * std::fabs(r))) {
      std::ostringstream o;
      o.precision(9);
      o << "element " << i << ": " << g << " vs " << refName << " " << r;
      return o.str();
    }
  }
  return {};
}

}  // namespace fuselens::test
