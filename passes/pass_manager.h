// The pass manager: parses a pipeline string, runs each pass, and after every
// pass verifies the graph, clones a snapshot, and records a PassRecord
// (changed?, statistics, diagnostics, time). The GUI timeline and the CLI's
// --print-ir-after-all are two views of the same records.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "core/support/cancel.h"
#include "core/support/status.h"
#include "passes/pass.h"

namespace fuselens {

struct PassSpec {
  std::string name;
  PassOptions options;
  std::string str() const;  // "fuse-ops{max-ops=8}"
};

// "dce,fuse-ops{max-ops=8}" -> specs; unknown pass names and bad syntax are errors.
Expected<std::vector<PassSpec>> parsePipeline(const std::string& text);

struct PassRecord {
  std::string pass;  // spec string
  bool changed = false;
  std::map<std::string, int64_t> stats;
  std::vector<Diagnostic> diagnostics;
  std::vector<FusionDecision> decisions;  // the ones this pass made
  double millis = 0;
  size_t nodesBefore = 0, nodesAfter = 0;
};

struct Snapshot {
  std::string label;  // "import" for the first, then the pass spec
  Graph graph;
  PassRecord record;
};

struct PipelineResult {
  std::vector<Snapshot> snapshots;  // [0] is the input graph
  std::vector<FusionDecision> decisions;
};

// Progress reports each pass; cancel stops between passes. A pass error or a
// verifier failure after a pass stops the pipeline with a Status naming the pass.
Expected<PipelineResult> runPipeline(const Graph& input, const std::vector<PassSpec>& specs,
                                     const Progress& progress = {}, const CancelToken& cancel = {});

// The pipeline used when none is given.
std::string defaultPipeline();

}  // namespace fuselens
