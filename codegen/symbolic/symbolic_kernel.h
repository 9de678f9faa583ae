// Symbolic kernels (`--dynamic`): one compiled kernel for every value of a
// symbolic dim. A kernel is lowered and scheduled at several sample values of
// the dim; when every sample has the same loop IR up to its integers, each
// integer that differs is fitted as a form over the kernel's atoms (the dims
// its params vary by: sym_form.h), and the kernel is rebuilt with those
// integers computed at run time from one more i64 param, `dims`, that the
// compiler fills per shape (a prepacked param). Loop extents become run-time
// extents (Stmt::runtimeExtent); a float that is 1/n of such an integer (a
// mean over the dim) is computed from it. The rebuilt kernel prints, and so
// hashes (kernel_key.h), the same at every shape, which is what lets the
// kernel cache serve a whole range with one compile.
//
// At a new shape the kernel lowered there is compared with the forms: when
// its loop IR has the samples' structure and every number is what its form
// gives, the instance is verified. Otherwise (a short length clamps a
// register tile to its rows, or folds a loop of extent 1) the symbolic kernel
// still runs it: its forms are exact integer identities fitted with samples to
// spare, and the schedule it carries is valid at any length; such instances
// are counted as unverified, and a sweep's --check-eager judges them.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "codegen/loop/loop_ir.h"
#include "codegen/symbolic/sym_form.h"
#include "core/support/status.h"

namespace fuselens {

struct SymbolicKernel {
  LoopFunc sample;  // the first sample as lowered: the structure instances are checked against
  LoopFunc func;    // the rebuilt kernel: the sample's params with `dims` after the inputs
  size_t dimsParam = 0;
  struct AtomSource {
    size_t param = 0, axis = 0;  // the atom is this dim of this param (the sample's order)
  };
  std::vector<AtomSource> atoms;
  // Per integer of the loop IR, in the walk's order: the form when it varies
  // with the dims, else the sample's value (ints), likewise for floats.
  std::vector<std::optional<SymForm>> intForms;
  std::vector<int64_t> intValues;
  std::vector<std::optional<SymForm>> floatForms;  // the form of n where the float is 1/n
  std::vector<double> floatValues;
  // Buffers whose size depends on the dims (attention's seq x seq scores and
  // packed operands, a softmax row cached in a local, a MatMul tail's
  // accumulators): per axis its form, or the sample's value. Each takes one
  // more slot of `dims` (after the atoms), filled per shape: a local's element
  // count (allocated at run time on the stack), a temp's byte offset in
  // scratch (scratchLayout puts these temps after the fixed ones).
  struct SizedBuffer {
    size_t buffer = 0;
    std::vector<std::optional<SymForm>> axes;
    std::vector<int64_t> values;
    std::vector<int64_t> eval(const std::vector<int64_t>& atoms) const;
  };
  std::vector<SizedBuffer> sized;
  size_t varying = 0;  // integers and floats that depend on the dims
  // Whether an instance that does not verify may still run. The forms stand
  // for lengths whose kernel is shaped otherwise only when the samples they
  // were fitted on are every sample from some length up (mixed residues mod
  // 2..16; the ones left out all shorter: a short length folds a loop). A
  // group of odd widths alone fits (w+1)/2, wrong at even widths: its kernel
  // serves verified instances only.
  bool servesUnverified = false;
};

// Generalizes one kernel from its samples (the same kernel lowered at >= 3
// values of the dim). An error says in one sentence why it cannot be (its
// structure changes with the dim, a buffer's size follows no form of it, a float that
// is no reciprocal, too few samples to pin a form down).
Expected<SymbolicKernel> generalizeKernel(const std::vector<const LoopFunc*>& samples);

struct SymbolicInstance {
  LoopFunc func;
  bool verified = false;  // `lowered` had the samples' structure and every number matched
};
// The symbolic kernel for `lowered`, the same kernel lowered at the current
// shape: its dims read from lowered's param shapes. An error when lowered's
// params differ in number, rank or dtype.
Expected<SymbolicInstance> instantiate(const SymbolicKernel& k, const LoopFunc& lowered);

}  // namespace fuselens
