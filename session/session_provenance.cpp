// Session::annotatedCode: the code text of the final graph with its kernels'
// origins (session/provenance.h).
#include "session/session.h"

namespace fuselens {
namespace {

// The assembly is the host's: its comment syntax is the host's.
#if defined(__x86_64__) || defined(__i386__)
constexpr const char* kAsmComment = "#";
#elif defined(__aarch64__)
constexpr const char* kAsmComment = "//";
#else
constexpr const char* kAsmComment = "";
#endif

}  // namespace

Expected<AnnotatedCode> Session::annotatedCode(CodeKind kind, const Progress& progress,
                                               const CancelToken& cancel) {
  auto text = codeText(kind, progress, cancel);
  if (!text) return text.status();
  if (!compiled_) return AnnotatedCode{std::move(*text), {}};
  // Comments only where the text stays valid in its own language; the CUDA C
  // emitter writes its own.
  const char* comment = kind == CodeKind::LoopIr   ? "//"
                        : kind == CodeKind::LlvmIr ? ";"
                        : kind == CodeKind::Asm    ? kAsmComment
                                                   : "";
  return annotateOrigins(*text, compiled_->kernels(), finalGraph(), original(), comment);
}

}  // namespace fuselens
