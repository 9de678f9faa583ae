// Internal to session/: what Session::compare and compareIsolated both start
// from (Session::compareRuns, session_compare.cpp).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "session/reference_runs.h"
#include "session/session.h"

namespace fuselens {

struct Session::ComparedRuns {
  ReferenceRuns refs;                               // eager; f64 and f32 sums when rounding
  std::vector<std::optional<TensorData>> compiled;  // by value index of the final graph
};

// Fills row's metrics, rounding check and verdict: `got` (stored in `layout`)
// against the reference runs' tensors of `origin`, a value of `original`.
// `storage`: the precision the compiled run stores tensors in (--precision);
// below f32, one ulp of it is the expected error's floor (storage_floor.h).
void judgeRow(CompareRow& row, const Graph& original, const ReferenceRuns& refs, ValueId origin,
              const TensorData& got, const Layout& layout, const CompareOptions& opts,
              DType storage = DType::F32);

// Every kernel-boundary tensor of `g` (compiled into `compiled`, by value
// index) against its origin in `original`'s reference runs.
CompareReport compareBoundaries(const Graph& original, const Graph& g, const ReferenceRuns& refs,
                                const std::vector<std::optional<TensorData>>& compiled,
                                const std::vector<KernelInfo>& kernels, const CompareOptions& opts);

// Runs `module` with the faults of `perturbations` planted (none: a plain run).
Expected<std::vector<std::optional<TensorData>>> runPerturbed(
    const CompiledModule& module, const std::map<std::string, TensorData>& inputs,
    const Perturbations& perturbations, const CancelToken& cancel);

}  // namespace fuselens
