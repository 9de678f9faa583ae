// What the tensor inspector shows of one tensor, computed without Qt so that
// `fuselens-cli tensor` and the GUI's inspector dock print the same words:
// statistics, a histogram, a 2-D slice of an N-D tensor, and the element-wise
// error map between the eager reference and the compiled run.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/tensor.h"
#include "core/support/status.h"

namespace fuselens {

struct TensorStats {
  int64_t count = 0;   // every element
  int64_t finite = 0;  // the elements min, max, mean and std are over
  int64_t nan = 0, posInf = 0, negInf = 0, zeros = 0;
  double min = 0, max = 0, mean = 0, std = 0;  // 0 when no element is finite
};
TensorStats tensorStats(const TensorData& t);

// The stats as the faces print them, one line each:
//   count 61440 (61438 finite)
//   min -1.25  max 3.5
//   mean 0.0123  std 0.501
//   NaN 1  +Inf 1  -Inf 0  zeros 17
std::vector<std::string> statsLines(const TensorStats& s);
// "f32[1,16,48,80]"
std::string shapeText(const TensorData& t);

struct Histogram {
  double lo = 0, hi = 0;        // the finite range; bins split it evenly
  std::vector<int64_t> counts;  // empty when no element is finite
  int64_t ignored = 0;          // NaN and Inf, left out
  double binLo(size_t i) const;
};
// `bins` even bins over [min, max] of the finite elements (one bin when all
// are equal). Fails on bins < 1.
Expected<Histogram> histogram(const TensorData& t, int bins);
// "histogram (20 bins, 2 NaN/Inf ignored)" then one row per bin:
//   [-1.25, -1.01)  ########                    120
std::vector<std::string> histogramLines(const Histogram& h, int barWidth = 40);

// A 2-D view of an N-D tensor: two axes vary (rows, columns), every other
// axis is held at `fixed[axis]`. A 1-D tensor is one column; a scalar 1x1.
struct SliceSpec {
  int rowAxis = 0, colAxis = 1;  // -1: that side has one entry (rank < 2)
  std::vector<int64_t> fixed;    // one per axis; the varying axes' entries are ignored
};
// The last two axes varying, the others at 0.
SliceSpec defaultSlice(size_t rank);
// "0,:,3,:" (one entry per axis, ':' for the two varying axes; one ':' for a
// 1-D tensor). An error sentence naming the shape when it does not fit.
Expected<SliceSpec> parseSlice(const std::string& text, const std::vector<int64_t>& shape);
std::string sliceText(const SliceSpec& s, size_t rank);  // inverse of parseSlice
// Checks the axes and indices against the shape.
Status checkSlice(const SliceSpec& s, const std::vector<int64_t>& shape);
int64_t sliceRows(const SliceSpec& s, const std::vector<int64_t>& shape);
int64_t sliceCols(const SliceSpec& s, const std::vector<int64_t>& shape);
// The flat (row-major) index of slice element (row, col): what a lazy table reads.
int64_t sliceElement(const SliceSpec& s, const std::vector<int64_t>& shape, int64_t row,
                     int64_t col);
// The slice copied out as a [rows, cols] tensor of the same dtype.
Expected<TensorData> slice2D(const TensorData& t, const SliceSpec& s);

// |actual - reference| element by element, as f64 (integers too). Shapes must match.
Expected<TensorData> absErrorMap(const TensorData& reference, const TensorData& actual);
// The expected error of each element, as the rounding check measures it
// (core/compare/rounding.h): max(|sample - exact|, |eager - exact|, one ulp of
// exact in `dtype`); `eager` may be null.
Expected<TensorData> expectedErrorMap(const TensorData& exact, const TensorData& sample,
                                      const TensorData* eager, DType dtype);
// |actual - exact| / expected, element by element (0 where both are 0).
Expected<TensorData> errorRatioMap(const TensorData& exact, const TensorData& actual,
                                   const TensorData& expected);

// One value of the last compare, every side in the logical layout (a
// compiled tensor stored NCHW8c is shown unblocked). The tensors are shared
// with what the session keeps, so fetching one copies nothing but a blocked
// compiled tensor.
struct InspectedTensor {
  std::string name;
  std::string producer;  // the kernel or op that produced it in the final graph; "" when none
  std::string layout;    // the compiled tensor's storage layout ("NCHW8c"); "" when plain
  std::shared_ptr<const TensorData> eager, exact, compiled;
  std::shared_ptr<const TensorData> expected;  // each element's expected rounding error
  std::string note;  // why a side is missing ("not a kernel boundary: ..."); "" when none is
};

// What the inspector can show of a tensor: its values on one run, or the error
// map |compiled - eager| (Error) or |compiled - exact| / expected error (Ratio).
enum class TensorSide { Eager, Compiled, Exact, Error, Ratio };
std::string_view sideName(TensorSide s);  // "eager", "compiled", "exact", "error", "ratio"
std::optional<TensorSide> parseSide(std::string_view name);
// The side's tensor; an error sentence saying why when the side is missing.
Expected<std::shared_ptr<const TensorData>> sideTensor(const InspectedTensor& t, TensorSide side);
// "conv_3 (from k3_fused_conv): f32[1,16,48,80], compiled NCHW8c shown as NCHW"
std::string headerLine(const InspectedTensor& t);

}  // namespace fuselens
