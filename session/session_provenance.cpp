// Session::annotatedCode: the code text of the final graph with its kernels'
// origins (session/provenance.h).
#include "session/session.h"

namespace fuselens {

Expected<AnnotatedCode> Session::annotatedCode(CodeKind kind, const Progress& progress,
                                               const CancelToken& cancel) {
  auto text = codeText(kind, progress, cancel);
  if (!text) return text.status();
  if (!compiled_) return AnnotatedCode{std::move(*text), {}};
  // Comments only where the text stays valid in its own language; the CUDA C
  // emitter writes its own, and assembly comment syntax differs per target.
  const char* comment = kind == CodeKind::LoopIr ? "//" : kind == CodeKind::LlvmIr ? ";" : "";
  return annotateOrigins(*text, compiled_->kernels(), finalGraph(), original(), comment);
}

}  // namespace fuselens
