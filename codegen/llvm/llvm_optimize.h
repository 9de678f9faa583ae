// Internal to the LLVM backend: the one -O pipeline the JIT and export share,
// so a kernel optimizes the same way in memory and in an exported library.
// LLVM types are only forward-declared here.
#pragma once

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace fuselens {

// Registers the native target once per process.
void initNativeTarget();
// The new pass manager's default pipeline at `level` (0..3) for tm's CPU.
void optimizeModule(llvm::Module& m, llvm::TargetMachine& tm, int level);

}  // namespace fuselens
