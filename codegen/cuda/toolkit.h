// The CUDA toolkit's command-line tools (ptxas, nvcc), found and run as child
// processes: FuseLens links none of them, so a machine without the toolkit
// still builds and starts, and every call that needs one says which is missing.
#pragma once

#include <string>

namespace fuselens {

// The path of toolkit program `name` ("ptxas", "nvcc"): $CUDA_HOME/bin,
// /usr/local/cuda/bin, then the PATH; empty when none is executable.
std::string findCudaTool(const std::string& name);

// Runs `command` through /bin/sh with stderr merged into `output`; returns the
// exit status (-1 when it could not start).
int runToolCommand(const std::string& command, std::string* output);

// `s` in single quotes for /bin/sh.
std::string shellQuoted(const std::string& s);

}  // namespace fuselens
