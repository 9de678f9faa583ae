// Combines a variadic op's operands (Sum, Max, Min, Mean) as a balanced tree
// rather than a left fold. A left fold over a 50,000-input Sum is an
// expression 50,000 levels deep, and the recursive walks over expressions
// (simplification, printing, LLVM emission) would overflow the stack; the
// balanced tree is log2(n) deep (16 for 50,000). Pairwise summation is also no
// less accurate than the left fold eager uses, so comparisons keep passing.
#pragma once

#include <vector>

#include "codegen/loop/loop_ir.h"

namespace fuselens {

// ((a0 . a1) . (a2 . a3)) ...; `args` must not be empty.
template <class Combine>
ExprRef foldBalanced(std::vector<ExprRef> args, Combine combine) {
  while (args.size() > 1) {
    std::vector<ExprRef> next;
    next.reserve((args.size() + 1) / 2);
    for (size_t i = 0; i + 1 < args.size(); i += 2) next.push_back(combine(args[i], args[i + 1]));
    if (args.size() % 2) next.push_back(args.back());
    args = std::move(next);
  }
  return args[0];
}

}  // namespace fuselens
