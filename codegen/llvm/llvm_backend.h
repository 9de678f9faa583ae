// The LLVM CPU backend's public face: compiles LoopFuncs into one module,
// optimizes it with the new pass manager, JITs it with ORC LLJIT and hands out
// plain function pointers. No LLVM type appears here.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "codegen/loop/loop_ir.h"
#include "core/support/status.h"

namespace fuselens {

class JitModule {
 public:
  // args[i] points at param i's data: the LoopFunc's inputs, then its outputs.
  using KernelFn = void (*)(void** args);

  // optLevel 0..3 (clamped) drives both the IR pipeline and the code generator.
  static Expected<std::unique_ptr<JitModule>> compile(const std::vector<const LoopFunc*>& funcs,
                                                      int optLevel);
  ~JitModule();

  KernelFn kernel(size_t i) const { return fns_[i]; }  // in the order given to compile
  // The module after optimization, just before it is handed to the JIT.
  const std::string& irText() const { return ir_; }
  // Seconds per backend step of compile().
  double emitSeconds = 0, optimizeSeconds = 0, codegenSeconds = 0;

 private:
  struct Impl;
  JitModule();
  std::unique_ptr<Impl> impl_;
  std::vector<KernelFn> fns_;
  std::string ir_;
};

// Ahead-of-time output for export: the same kernels (optimized like the JIT's),
// plus read-only data globals (external, 64-byte aligned, named by `globals`),
// written as LLVM IR text, assembly and an ELF object (position independent, so
// it links into a shared library). Empty paths are skipped. `target` is the
// CPU (codegen/target.h): the host's features, or an x86-64 level's, so the
// object runs on every CPU of that level.
struct ObjectFiles {
  std::string llPath, asmPath, objPath;
};
struct DataGlobal {
  std::string name;
  std::shared_ptr<const TensorData> data;
};
struct CpuTarget;
Status emitObjectFiles(const std::vector<const LoopFunc*>& funcs,
                       const std::vector<DataGlobal>& globals, int optLevel,
                       const CpuTarget& target, const ObjectFiles& out);

}  // namespace fuselens
