// The graph passes a control-flow body (If branch, Loop or Scan body) runs
// before it compiles. A body is imported as written, so without them it
// compiles op by op: silero-vad's If branch made 39 kernels where the same
// graph through the model's pipeline makes 17, and ran at twice the time.
// codegen cannot call the pass manager (passes/ sits beside it), so whoever
// compiles (Session::compile) sets the pipeline for the compile on its thread;
// each body keeps the one set when it was bound and sets it again around its
// own compiles, so nested bodies and those compiled at run time get it too.
#pragma once

#include <functional>
#include <memory>

#include "core/ir/graph.h"
#include "core/support/status.h"

namespace fuselens {

// Rewrites one specialization of a body (static types); an error leaves the
// body unoptimized, which still compiles.
using BodyPipeline = std::function<Expected<Graph>(const Graph&)>;

// The pipeline set on this thread; null when none.
std::shared_ptr<const BodyPipeline> bodyPipeline();

class ScopedBodyPipeline {
 public:
  explicit ScopedBodyPipeline(std::shared_ptr<const BodyPipeline> p);
  ~ScopedBodyPipeline();
  ScopedBodyPipeline(const ScopedBodyPipeline&) = delete;
  ScopedBodyPipeline& operator=(const ScopedBodyPipeline&) = delete;

 private:
  std::shared_ptr<const BodyPipeline> saved_;
};

}  // namespace fuselens
