// Input shapes as a user writes them, for models exported with dynamic dims:
// "x=1x3x224x224" (CLI --shape, repeatable) or "x=1x3x224x224; mask=1x128"
// (the GUI's Input shapes box). Session::bindInputShapes applies them.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/support/status.h"

namespace fuselens {

using InputShapes = std::map<std::string, std::vector<int64_t>>;

// One or more "name=AxBxC" items separated by ";"; a
// scalar is "name=" with no dims. Each name once, dims non-negative integers.
Expected<InputShapes> parseInputShapes(const std::string& text);

}  // namespace fuselens
