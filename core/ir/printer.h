// The IR text format: a readable printer and a parser that round-trip.
//
//   graph @main(%x: f32[1,128]) -> (f32[1,64]) {
//     %w = Constant : f32[128,64] dense<[0.5, ...]>
//     %0 = MatMul(%x, %w) : f32[1,64] loc("fc1")
//     %2 = Fused(%0, %b) {group=0, kind="ElemWise"} : f32[1,64] {
//       graph @group0(%a: f32[1,64], %c: f32[64]) -> (f32[1,64]) { ... }
//     }
//     return %2
//   }
//
// IR dumps, pass tests and the GUI's IR pane all use this format.
#pragma once

#include <string>

#include "core/ir/graph.h"
#include "core/support/status.h"

namespace fuselens {

struct PrintOptions {
  // Constants with more elements are printed as dense<...> (not parseable
  // back); -1 prints every element.
  int64_t elideConstantsOver = 16;
  bool showOrigins = false;  // append "origin(%v)" to values whose origin differs
};

std::string printGraph(const Graph& g, const PrintOptions& opts = {});

// Parses the printed form back. Errors name the line and column.
Expected<Graph> parseGraph(const std::string& text);

}  // namespace fuselens
