#include "codegen/compiler.h"

namespace fuselens {
// Placeholder until the loop-IR lowering and the LLVM backend land in this directory.
Expected<std::unique_ptr<CompiledModule>> compileGraph(const Graph&, const CompileOptions&,
                                                       const Progress&, const CancelToken&) {
  return Status::error("code generation is not built yet");
}
}  // namespace fuselens
