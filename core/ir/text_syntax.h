// Lexical helpers shared by the IR printer and parser, so what one writes the
// other reads.
#pragma once

#include <string>

#include "core/ir/graph.h"

namespace fuselens {

// Letters, digits, '_' and '.', so "%fc1.out" needs no quotes.
bool isPlainIdentifier(const std::string& s);
// "a\"b" with backslash escapes for '"' and '\\'.
std::string quote(const std::string& s);
// "%name", "%\"/fc1/Gemm_output_0\"" or "%v12" for an unnamed value.
std::string valueRef(const Graph& g, ValueId id);

}  // namespace fuselens
