// `fuselens-cli compare --isolated`: every kernel compiled alone and fed the
// eager tensors of its inputs, printed beside the end-to-end figures with a
// verdict per tensor (kernel differs / accumulated upstream).
#pragma once

#include <map>
#include <string>

#include "session/session.h"

namespace fuselens::cli {

// Runs the isolated comparison and prints it (a table, or JSON); returns the exit code.
int runIsolatedCompare(Session& session, const std::map<std::string, TensorData>& inputs,
                       const CompareOptions& opts, bool json);

}  // namespace fuselens::cli
