// Suggested values for a model's unbound dims, so neither face has to answer
// "what is seq?" with a blank: the GUI's dims dialog fills its boxes with them
// and the CLI's refusal names them ("suggested: --dim seq=128"). A suggestion
// comes, in this order, from the model's metadata (a hint such as
// "dim.seq" = "128"), from the dim's name (batch -> 1, seq -> 128, height -> 224),
// from the input's name (input_ids' second axis is a sequence), or is a small
// value that compiles fast. Each says which of these it came from.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "core/support/status.h"
#include "session/input_shapes.h"

namespace fuselens {

struct DimUse {
  std::string input;  // the graph input's name
  size_t axis = 0;
};

struct DimSuggestion {
  std::string name;              // the symbol, "seq"
  std::vector<DimUse> uses;      // every input axis that carries it, in input order
  int64_t value = 1;             // the suggestion, >= 1
  std::string reason;            // "named like a sequence length"
  std::string usesText() const;  // "x[1], mask[1]"
};

// The named dims of `g`'s inputs that are still symbolic, in the order the
// inputs first use them. `metadata` is the model's metadata_props, if known.
std::vector<DimSuggestion> suggestDims(const Graph& g,
                                       const std::map<std::string, std::string>& metadata = {});

// suggestDims of the model file as imported, before any dim is bound (a
// restored session's graph has its dims fixed already).
Expected<std::vector<DimSuggestion>> suggestDimsOfFile(const std::string& modelPath);

// Every input that uses one of `dims` with its shape under those values; an
// input with a dim neither static nor in `dims` is left out.
InputShapes shapesForDims(const Graph& g, const std::map<std::string, int64_t>& dims);

// The value each dim of `dims` has in `shapes` (a restored session's bound
// input shapes); dims no shape fixes are left out.
std::map<std::string, int64_t> dimsFromShapes(const std::vector<DimSuggestion>& dims,
                                              const InputShapes& shapes);

// " (suggested: --dim seq=128)" for the dim `name` of `g`; empty when `g` has
// no such input dim.
std::string suggestedDimFlag(const Graph& g, const std::string& name,
                             const std::map<std::string, std::string>& metadata = {});

}  // namespace fuselens
