// Blocked-layout bookkeeping: the name of a layout, the logical type behind a
// blocked one and the inverse transform compare uses (see layout.h).
#include <algorithm>
#include <cstring>

#include "core/ir/layout_store.h"

namespace fuselens {

std::string Layout::name() const {
  return blocked() ? "NCHW" + std::to_string(block) + "c" : std::string();
}

std::optional<TensorType> Layout::logicalType(const TensorType& stored) const {
  if (!blocked()) return stored;
  if (!stored.rankKnown || stored.rank() != 5 || stored.shape[4] != Dim::fixed(block) ||
      channels <= 0 || stored.shape[1] != Dim::fixed((channels + block - 1) / block))
    return std::nullopt;
  TensorType t = stored;
  t.shape = {stored.shape[0], Dim::fixed(channels), stored.shape[2], stored.shape[3]};
  return t;
}

Expected<TensorData> toLogical(const TensorData& stored, const Layout& layout) {
  if (!layout.blocked()) return stored;
  auto logical = layout.logicalType(stored.type());
  if (!logical)
    return Status::error("a tensor of shape " + formatShape(stored.shape) + " is not " +
                         layout.name() + " of " + std::to_string(layout.channels) + " channels");
  const int64_t N = stored.shape[0], CB = stored.shape[1], HW = stored.shape[2] * stored.shape[3];
  const int64_t b = layout.block, C = layout.channels;
  const size_t es = dtypeSize(stored.dtype);
  TensorData out(stored.dtype, *logical->staticShape());
  // out[n][c][p] = stored[n][c / b][p][c % b], element by element.
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t p = 0; p < HW; ++p) {
        int64_t from = ((n * CB + c / b) * HW + p) * b + c % b;
        int64_t to = (n * C + c) * HW + p;
        std::memcpy(out.bytes.data() + to * es, stored.bytes.data() + from * es, es);
      }
  return out;
}

Expected<TensorData> toStored(const TensorData& logical, const Layout& layout) {
  if (!layout.blocked()) return logical;
  const int64_t b = layout.block, C = layout.channels;
  if (logical.rank() != 4 || logical.shape[1] != C || C <= 0)
    return Status::error("a tensor of shape " + formatShape(logical.shape) +
                         " cannot be stored as " + layout.name() + " of " + std::to_string(C) +
                         " channels");
  const int64_t N = logical.shape[0], CB = (C + b - 1) / b;
  const int64_t HW = logical.shape[2] * logical.shape[3];
  const size_t es = dtypeSize(logical.dtype);
  TensorData out(logical.dtype, {N, CB, logical.shape[2], logical.shape[3], b});
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t p = 0; p < HW; ++p) {
        int64_t to = ((n * CB + c / b) * HW + p) * b + c % b;
        int64_t from = (n * C + c) * HW + p;
        std::memcpy(out.bytes.data() + to * es, logical.bytes.data() + from * es, es);
      }
  return out;
}

}  // namespace fuselens
