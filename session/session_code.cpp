// Session::codeText and kernelNameOf: the generated code behind the code pane.
#include "codegen/cuda/cuda_c.h"
#include "codegen/cuda/nvrtc.h"
#include "session/session.h"

namespace fuselens {

Expected<std::string> Session::codeText(CodeKind kind, const Progress& progress, const CancelToken& cancel) {
  if (!model_) return Expected<std::string>::error("no model is open");
  if (kind == CodeKind::LoopIr || kind == CodeKind::LlvmIr) {
    if (!compiled_) FL_RETURN_IF_ERROR(compile(compileOptions_, progress, cancel));
    return kind == CodeKind::LoopIr ? compiled_->loopIrText() : compiled_->llvmIrText();
  }
  auto cuda = emitCudaModule(finalGraph(), progress, cancel);
  if (!cuda) return cuda.status();
  if (kind == CodeKind::CudaC) return cuda->source;
  report(progress, 0.8, "NVRTC: CUDA C to PTX");
  return compileToPtx(cuda->source);
}

std::string Session::kernelNameOf(NodeId n) const {
  if (!compiled_) return {};
  for (const KernelInfo& k : compiled_->kernels())
    if (k.node == n) return k.name;
  return {};
}

}  // namespace fuselens
