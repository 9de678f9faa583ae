// The verifier: checks the invariants every pass must keep. It runs after
// every pass; a failure names the pass's victim (node or value) in one sentence.
#pragma once

#include "core/ir/graph.h"
#include "core/support/status.h"

namespace fuselens {

// SSA (one producer per value, producer/user lists consistent), acyclic, every
// input defined, graph outputs live, types present, fused bodies well formed
// (same arity and types as their node) and verified recursively. When
// `original` is given, every origin must name a value or node of it.
Status verifyGraph(const Graph& g, const Graph* original = nullptr);

}  // namespace fuselens
