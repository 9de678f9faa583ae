// The LLVM CPU backend's public face. The JIT compiles each structurally
// distinct kernel once (kernel_key.h), takes it from the on-disk object cache
// (object_cache.h) when an earlier process compiled it, and compiles the rest
// in parallel, one LLVM context and target machine per thread, into objects
// that one ORC LLJIT links; it hands out plain function pointers. No LLVM type
// appears here.
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
  // contexts[i] (when given) is whatever besides its loop IR chose kernel i's
  // code, its schedule: part of its key, so it never shares code or a cache
  // entry with a kernel scheduled otherwise.
  static Expected<std::unique_ptr<JitModule>> compile(
      const std::vector<const LoopFunc*>& funcs, int optLevel,
      const std::vector<std::string>& contexts = {});
  ~JitModule();

  KernelFn kernel(size_t i) const { return fns_[i]; }  // in the order given to compile
  // The optimized IR of the distinct kernels, each function named by its key,
  // after a comment mapping kernel names to symbols. Made on first call (the
  // compile itself went to objects, some from the cache).
  std::string irText() const;

  // Backend steps: emit, optimize and object seconds are summed over the
  // compile threads; link is the JIT's; wall is the whole compile().
  double emitSeconds = 0, optimizeSeconds = 0, codegenSeconds = 0, linkSeconds = 0, wallSeconds = 0;
  size_t kernels = 0;    // functions asked for
  size_t unique = 0;     // distinct keys among them
  size_t cached = 0;     // of those, objects read from the disk cache
  size_t compiled = 0;   // of those, compiled by LLVM now
  int threads = 1;       // compile threads used
  std::string cacheDir;  // empty when the disk cache is off

 private:
  struct Impl;
  JitModule();
  std::unique_ptr<Impl> impl_;
  std::vector<KernelFn> fns_;
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
