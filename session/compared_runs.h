// Internal to session/: what Session::compare and compareIsolated both start
// from (Session::compareRuns, session_compare.cpp).
#pragma once

#include <optional>
#include <vector>

#include "session/reference_runs.h"
#include "session/session.h"

namespace fuselens {

struct Session::ComparedRuns {
  ReferenceRuns refs;                               // eager; f64 and f32 sums when rounding
  std::vector<std::optional<TensorData>> compiled;  // by value index of the final graph
};

}  // namespace fuselens
