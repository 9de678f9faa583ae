// Padding and slicing along the swept dim, element counts, and output verdicts
// for session/shape_sweep.cpp.
#include "session/sweep_tensors.h"

#include <algorithm>
#include <cstring>

#include "core/compare/compare.h"

namespace fuselens {
namespace {

// Copies the elements the two shapes share (the smaller extent on each axis)
// from `src` into `dst`, both row-major with the same rank and dtype.
void copyCommon(const TensorData& src, TensorData& dst) {
  const size_t rank = src.shape.size(), elem = dtypeSize(src.dtype);
  std::vector<int64_t> common(rank), srcStride(rank, 1), dstStride(rank, 1);
  for (size_t a = 0; a < rank; ++a) common[a] = std::min(src.shape[a], dst.shape[a]);
  for (size_t a = rank; a-- > 1;) {
    srcStride[a - 1] = srcStride[a] * src.shape[a];
    dstStride[a - 1] = dstStride[a] * dst.shape[a];
  }
  int64_t total = 1;
  for (int64_t c : common) total *= c;
  // Rows along the last axis are contiguous on both sides: copy them whole.
  const int64_t row = rank == 0 ? 1 : common[rank - 1];
  if (row == 0) return;
  std::vector<int64_t> idx(rank, 0);
  for (int64_t done = 0; done < total; done += row) {
    int64_t s = 0, d = 0;
    for (size_t a = 0; a < rank; ++a) s += idx[a] * srcStride[a], d += idx[a] * dstStride[a];
    std::memcpy(dst.bytes.data() + d * elem, src.bytes.data() + s * elem, size_t(row) * elem);
    for (size_t a = rank - 1; a-- > 0;) {  // next row: odometer over the leading axes
      if (++idx[a] < common[a]) break;
      idx[a] = 0;
    }
  }
}

}  // namespace

TensorData resizeAlong(const TensorData& t, const std::vector<size_t>& axes, int64_t size) {
  std::vector<int64_t> shape = t.shape;
  for (size_t a : axes) shape[a] = size;
  TensorData out(t.dtype, shape);  // zero-filled
  copyCommon(t, out);
  return out;
}

std::vector<size_t> axesOfSymbol(const TensorType& type, const std::string& dim) {
  std::vector<size_t> axes;
  for (size_t a = 0; a < type.shape.size(); ++a)
    if (type.shape[a].symbol == dim) axes.push_back(a);
  return axes;
}

int64_t computedElements(const Graph& g) {
  int64_t n = 0;
  for (NodeId id : g.nodeIds())
    for (ValueId v : g.node(id).outputs)
      if (v.valid()) n += g.value(v).type.numElements().value_or(0);
  return n;
}

OutputVerdict judgeOutputs(const Graph& reference, const ReferenceRuns& refs,
                           const std::map<std::string, TensorData>& outputs,
                           const CompareOptions& opts) {
  for (ValueId v : reference.outputs()) {
    const std::string& name = reference.value(v).name;
    auto got = outputs.find(name);
    const TensorData* eager = refs.eager.find(v);
    if (got == outputs.end() || !eager) return {false, name + ": missing from the run"};
    const Layout plain;
    const TensorData *exact = refs.exactOf(v), *sample = refs.sampleOf(v);
    if (opts.rounding() && exact && sample) {
      RoundingCheck c = checkRounding(*exact, *sample, plain, got->second, plain, opts, eager);
      if (c.verdict != NumericVerdict::WithinRounding) return {false, name + ": " + verdictText(c)};
      continue;
    }
    TensorMetrics m = compareTensors(*eager, got->second, opts.tolerance, opts.stat);
    if (verdictOf(m) != NumericVerdict::WithinRounding)
      return {false, name + ": out of tolerance " + opts.describe()};
  }
  return {true, opts.rounding() ? "within rounding" : "within tolerance"};
}

}  // namespace fuselens
