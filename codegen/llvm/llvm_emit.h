// Internal to the LLVM backend: loop IR -> LLVM IR for one LoopFunc. Only the
// two backend .cpp files include this; llvm types are forward-declared so the
// header itself stays cheap.
#pragma once

#include "codegen/loop/loop_ir.h"
#include "core/support/status.h"

namespace llvm {
class Module;
}

namespace fuselens {

// The symbol kernels call for Parallel loops (codegen/runtime/runtime.h).
inline constexpr const char* kParallelForSymbol = "fuselens_parallel_for";

// Adds `void <f.name>(ptr args)` to m: args[i] points at param i's data
// (inputs then outputs). Parallel loops become internal functions
// `<f.name>.par<k>(ptr ctx, i64 lo, i64 hi)` run through kParallelForSymbol.
Status emitLoopFunc(llvm::Module& m, const LoopFunc& f);

}  // namespace fuselens
