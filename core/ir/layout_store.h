// Storing a plain tensor in a blocked layout: the inverse of toLogical
// (layout.h), for feeding a kernel that reads a blocked value the eager
// reference's plain tensor (isolated compare). Plain code of its own, like
// toLogical, shared neither with the eager ToNCHWc op nor with codegen.
#pragma once

#include "core/ir/layout.h"

namespace fuselens {

// A plain [N,C,H,W] tensor stored in `layout` (padding lanes 0); a plain
// layout returns it unchanged. Errors when it is not the layout's logical shape.
Expected<TensorData> toStored(const TensorData& logical, const Layout& layout);

}  // namespace fuselens
