// An integer of a kernel that depends on its dims, found from samples: the
// kernel lowered at several values of a symbolic dim gives, at each position of
// its loop IR, one number per sample; SymForm is the formula over the kernel's
// atoms (the dims its params vary by) that gives them all. Lowering only ever
// multiplies and adds dims, and the schedule's splits divide them by a
// constant factor, so the forms are a polynomial of degree <= 2 in the atoms
// plus at most one term q * floor((s*m + c) / F) or q * ((s*m + c) mod F), with m
// a monomial: a split loop's outer extent, its tail and the tail's offset.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "codegen/loop/loop_ir.h"

namespace fuselens {

struct SymForm {
  struct Term {
    int64_t coef = 0;
    std::vector<int> atoms;  // a monomial: atom indices, sorted, repeated for powers
  };
  std::vector<Term> terms;  // the polynomial; no term: 0
  // The split term, when coef != 0: coef * floor((scale * mono + shift) /
  // divisor) or, with mod, coef * ((scale * mono + shift) mod divisor).
  struct Split {
    int64_t coef = 0;
    std::vector<int> mono;
    int64_t scale = 1, shift = 0, divisor = 1;
    bool mod = false;
  } split;

  int64_t eval(const std::vector<int64_t>& atoms) const;
  // As an i64 loop-IR expression, each atom given by `atom`.
  ExprRef expr(const std::function<ExprRef(int)>& atom) const;
  std::string str() const;  // "2*d0+1", "floor(d0/8)": names d0, d1, ...
};

// The form over atoms[k] (one row per sample) that gives values[k] for every
// sample; nullopt when no form of the family fits. affineOnly: a polynomial of
// degree <= 1 and no split term (how derived dims are told from new atoms).
std::optional<SymForm> fitForm(const std::vector<std::vector<int64_t>>& atoms,
                               const std::vector<int64_t>& values, bool affineOnly = false);

}  // namespace fuselens
