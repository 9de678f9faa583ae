// Writing files atomically: a temporary file beside the target, then rename,
// so a crash or a full disk never leaves a half-written file behind.
#pragma once

#include <string>

#include "core/support/status.h"

namespace fuselens {

Status writeFileAtomically(const std::string& path, const std::string& contents);

}  // namespace fuselens
