// The pass interface. A pass is a small class with one run(); it rewrites the
// graph in place and returns a PassResult saying whether anything changed,
// with statistics and diagnostics that travel to the timeline and the CLI.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "core/plan/buffer_plan.h"
#include "core/support/cancel.h"
#include "core/support/status.h"
#include "passes/fusion_decision.h"

namespace fuselens {

// Options of one pass in a pipeline string: fuse-ops{max-ops=8} -> {"max-ops": "8"}.
using PassOptions = std::map<std::string, std::string>;

struct PassContext {
  CancelToken cancel;
  std::vector<FusionDecision> decisions;  // appended to by the fusion passes
  // The names of the pipeline's passes and this pass's position in it, so a
  // pass can say "run layout first" only when layout does not run before it.
  std::vector<std::string> pipeline;
  size_t position = 0;
  // The f32 lanes of the target's widest vector (16 on AVX-512, 8 on AVX2):
  // layout's block when the pipeline names none. 8 unless the caller knows.
  int vectorLanes = 8;
  // Set by memory-plan: the buffer plan codegen can read (core/plan/buffer_plan.h).
  std::shared_ptr<const BufferPlan> bufferPlan;
};

struct PassResult {
  bool changed = false;
  std::map<std::string, int64_t> stats;  // "nodes removed": 3
  std::vector<Diagnostic> diagnostics;
  Status status;  // an error stops the pipeline

  static PassResult unchanged() { return {}; }
  static PassResult failed(Status s) {
    PassResult r;
    r.status = std::move(s);
    return r;
  }
};

class Pass {
 public:
  virtual ~Pass() = default;
  virtual std::string name() const = 0;
  virtual PassResult run(Graph& g, PassContext& ctx) = 0;
};

}  // namespace fuselens
