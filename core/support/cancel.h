// Progress and cancellation for long work (import, pipeline, compile, run).
// The GUI maps Progress to a progress bar on a worker thread, the CLI to a
// terminal line; a CancelToken set from any thread makes the work stop at the
// next check and return a "cancelled" Status.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>

namespace fuselens {

// fraction in [0,1]; stage is a short phrase ("pass fuse-ops", "JIT group 3").
using Progress = std::function<void(double fraction, const std::string& stage)>;

class CancelToken {
 public:
  CancelToken() : flag_(std::make_shared<std::atomic<bool>>(false)) {}
  void cancel() const { flag_->store(true); }
  bool cancelled() const { return flag_->load(); }
  void reset() const { flag_->store(false); }

 private:
  std::shared_ptr<std::atomic<bool>> flag_;
};

inline void report(const Progress& p, double fraction, const std::string& stage) {
  if (p) p(fraction, stage);
}

}  // namespace fuselens
