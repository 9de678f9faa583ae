// The dims a model was opened with last time, read back from the session file
// saved beside it (where Save Session suggests it), so that opening the model
// again, in any window or process, binds them without asking. A file that
// names another model, or none, gives nothing: the user is asked as before.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "session/dim_suggest.h"

namespace fuselens {

// "<dir>/<base>.fuselens.json" for "<dir>/<base>.onnx".
std::string besideSessionPath(const std::string& modelPath);

// The values `dims` had in the input shapes of `modelPath`'s beside session
// file, when that file exists, names this model and binds every one of them.
std::map<std::string, int64_t> savedDims(const std::string& modelPath,
                                         const std::vector<DimSuggestion>& dims);

}  // namespace fuselens
