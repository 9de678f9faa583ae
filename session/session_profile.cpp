// Session's report of the last compile: how many kernels were unique, taken
// from the disk cache or compiled, in one line both faces print.
#include "session/session.h"

namespace fuselens {

std::string Session::compileSummary() const {
  return compiled_ ? compileStatsText(compiled_->stats()) : std::string();
}

}  // namespace fuselens
