// Static cost of one loop-IR kernel for the profiler's roofline: how many
// floating-point operations it runs and how many bytes it must move at least.
#pragma once

#include "codegen/loop/loop_ir.h"

namespace fuselens {

struct LoopCost {
  double flops = 0;  // float ops count 1, Fma 2, divide 4, math functions the ops they
                     // issue (exp 16...), times enclosing trip counts
  double bytes = 0;  // every param (inputs and outputs) once
};

LoopCost loopCost(const LoopFunc& f);

}  // namespace fuselens
