// The storage layout of a value, next to its origin: plain (NCHW or whatever
// the imported graph had) or channel-blocked NCHW<b>c, where a logical
// [N,C,H,W] tensor is stored as [N,ceil(C/b),H,W,b] with channel c at block
// c/b, lane c%b, and the lanes past C (padding) holding anything.
//
// The layout pass records it on every value it blocks, so a blocked tensor
// still maps back to the imported graph: compare undoes each side's layout
// (toLogical) before comparing a value with its origin. The inverse transform
// here is plain code of its own, shared neither with the eager ops ToNCHWc /
// FromNCHWc nor with codegen, so a bug in one of them cannot hide in all.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/ir/tensor.h"
#include "core/support/status.h"

namespace fuselens {

struct Layout {
  int32_t block = 0;     // 0: plain; 8 or 16: NCHW<block>c
  int64_t channels = 0;  // the logical channel count C (blocked only)

  static Layout blockedNCHW(int32_t block, int64_t channels) { return Layout{block, channels}; }
  bool blocked() const { return block > 0; }
  bool operator==(const Layout& o) const { return block == o.block && channels == o.channels; }
  bool operator!=(const Layout& o) const { return !(*this == o); }
  std::string name() const;  // "NCHW8c"; "" when plain
  // The logical [N,C,H,W] type of a blocked [N,Cb,H,W,b] type; nullopt when the
  // type does not fit the layout (rank, block or channel count).
  std::optional<TensorType> logicalType(const TensorType& stored) const;
};

// The tensor in plain layout: a blocked tensor unblocked (padding dropped), a
// plain one copied. Errors when the shape does not fit the layout.
Expected<TensorData> toLogical(const TensorData& stored, const Layout& layout);

}  // namespace fuselens
