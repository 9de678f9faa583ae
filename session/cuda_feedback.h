// ptxas feedback to fusion, as a pipeline edit: the members a CUDA export
// found in spilling kernels (ExportFiles::cudaSplits) join fuse-ops' split=
// option, so the next run of the pipeline starts a kernel at each (rule
// cuda-spills, which `explain` shows with its hint). The face re-runs the
// pipeline with the result, a few rounds at most (export --cuda-register-feedback).
#pragma once

#include <string>
#include <vector>

#include "core/support/status.h"

namespace fuselens {

// `pipeline` with `at` added to its fuse-ops split= option. Fails when the
// pipeline has no fuse-ops, or when every name is already split (another
// round would make the same kernels).
Expected<std::string> withFuseOpsSplit(const std::string& pipeline,
                                       const std::vector<std::string>& at);

}  // namespace fuselens
