// Shared helpers of the op-family files: broadcasting, strides, index loops
// and node-located errors (see op_util.h).
#include "core/ops/op_util.h"

#include <algorithm>

namespace fuselens::ops {

Status checkInputCount(const Node& n, size_t count, size_t min, size_t max) {
  if (count < min || count > max) {
    std::string want =
        min == max ? std::to_string(min) : std::to_string(min) + " to " + std::to_string(max);
    return nodeError(n, "expects " + want + " inputs, got " + std::to_string(count));
  }
  for (size_t i = 0; i < min; ++i)
    if (!n.inputs[i].valid())
      return nodeError(n, "required input " + std::to_string(i) + " is missing");
  return Status::ok();
}

std::string shapeStr(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string dimsStr(const std::vector<Dim>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + shape[i].str();
  return s + "]";
}

Expected<std::vector<Dim>> broadcastDims(const Node& n, const std::vector<Dim>& a,
                                         const std::vector<Dim>& b) {
  size_t rank = std::max(a.size(), b.size());
  std::vector<Dim> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Right-aligned: a missing leading dim behaves as 1.
    Dim da = i < rank - a.size() ? Dim::fixed(1) : a[i - (rank - a.size())];
    Dim db = i < rank - b.size() ? Dim::fixed(1) : b[i - (rank - b.size())];
    if (da.isStatic() && db.isStatic()) {
      if (da.value != db.value && da.value != 1 && db.value != 1)
        return nodeError(n, "shapes " + dimsStr(a) + " and " + dimsStr(b) +
                                " cannot be broadcast (dimension " + std::to_string(i) + ": " +
                                da.str() + " vs " + db.str() + ")");
      out[i] = da.value == 1 ? db : da;
    } else if (da.isStatic() && da.value == 1) {
      out[i] = db;
    } else if (db.isStatic() && db.value == 1) {
      out[i] = da;
    } else if (da.isStatic() || db.isStatic()) {
      // A symbol against N > 1: the symbol must be 1 or N at run time; either way N.
      out[i] = da.isStatic() ? da : db;
    } else if (da == db && !da.symbol.empty()) {
      out[i] = da;
    } else {
      out[i] = Dim::unknown();
    }
  }
  return out;
}

Expected<std::vector<int64_t>> broadcastShapes(const Node& n, const std::vector<int64_t>& a,
                                               const std::vector<int64_t>& b) {
  std::vector<Dim> da, db;
  for (int64_t d : a) da.push_back(Dim::fixed(d));
  for (int64_t d : b) db.push_back(Dim::fixed(d));
  auto out = broadcastDims(n, da, db);
  if (!out) return out.status();
  std::vector<int64_t> s;
  for (const Dim& d : *out) s.push_back(d.value);
  return s;
}

std::vector<int64_t> rowMajorStrides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> st(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) st[i - 1] = st[i] * shape[i];
  return st;
}

std::vector<int64_t> broadcastStrides(const std::vector<int64_t>& in,
                                      const std::vector<int64_t>& out) {
  std::vector<int64_t> inStrides = rowMajorStrides(in);
  std::vector<int64_t> st(out.size(), 0);
  size_t lead = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) st[lead + i] = in[i] == 1 ? 0 : inStrides[i];
  return st;
}

bool nextIndex(std::vector<int64_t>& idx, const std::vector<int64_t>& shape) {
  for (size_t i = shape.size(); i-- > 0;) {
    if (++idx[i] < shape[i]) return true;
    idx[i] = 0;
  }
  return false;
}

std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

}  // namespace fuselens::ops
