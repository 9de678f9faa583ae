// What makes two kernels the same machine code: the key the JIT dedupes
// kernels by and names their symbols and cache entries with. It hashes the
// kernel's printed loop IR with its own names replaced by position (function
// "k", buffers b0.., variables v0..), every float literal's exact bits (the
// printer rounds them), the bytes of embedded constant buffers, and `context`
// (the schedule, the target CPU and features, the LLVM version, the opt
// level). Graph value names never enter it, so repeated blocks of a model
// share one key.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "codegen/loop/loop_ir.h"

namespace fuselens {

// 64 hex digits (SHA-256).
std::string kernelKey(const LoopFunc& f, const std::string& context);

// SHA-256 of the parts, each length-prefixed, as 64 hex digits: the kernel key's
// hash, for other keys (the compile cache's) to be made the same way.
std::string sha256Hex(const std::vector<std::string_view>& parts);

// The loop IR text the key hashes (names canonicalized), for tests and debugging.
std::string canonicalLoopText(const LoopFunc& f);

}  // namespace fuselens
