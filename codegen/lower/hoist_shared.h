// Hoists subexpressions that one statement uses more than once into locals
// declared just before it. Lowering inlines producers into consumers and
// shares a subtree wherever a value is read twice at one position
// (t = a + b; y = t * sigmoid(t)); without this step the printer and any tree
// walk would expand such diamonds exponentially.
#pragma once

#include "codegen/loop/loop_ir.h"

namespace fuselens {

// Rewrites f's Store / Let / Assign statements; names the new locals e0, e1, ...
void hoistSharedExprs(LoopFunc& f);

}  // namespace fuselens
