// Integer division and remainder in index arithmetic, decided by the loops'
// ranges: (c*q + r) / c -> q and (c*q + r) % c -> r when r stays in [0, c)
// and q >= 0 over every iteration. Reshapes and squeezes lower to flat-index
// arithmetic (x[e / 508 % 512 * 508 + e % 508]); once the schedule has split
// the loops, the ranges make most of it plain affine code. Left alone, a
// vectorized loop divides 64-bit lanes, which x86 has no instruction for:
// LLVM scalarizes every lane (magika's GELU + max-pool kernel spent two thirds
// of its time there).
#pragma once

#include "codegen/loop/loop_ir.h"

namespace fuselens {

// Rewrites f in place; returns how many divisions and remainders it removed.
int simplifyIndexDivMod(LoopFunc& f);

}  // namespace fuselens
