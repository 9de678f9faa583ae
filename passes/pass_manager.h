// The pass manager: parses a pipeline string, runs each pass, and after every
// pass verifies the graph, clones a snapshot, and records a PassRecord
// (changed?, statistics, diagnostics, time). The GUI timeline and the CLI's
// --print-ir-after-all are two views of the same records.
#pragma once

#include <functional>
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
// The inverse: specs joined with ',' (parsePipeline(pipelineString(s)) == s).
std::string pipelineString(const std::vector<PassSpec>& specs);

struct PassRecord {
  std::string pass;  // spec string
  bool changed = false;
  std::map<std::string, int64_t> stats;
  std::vector<Diagnostic> diagnostics;
  std::vector<FusionDecision> decisions;         // the ones this pass made
  std::shared_ptr<const BufferPlan> bufferPlan;  // memory-plan's plan, for this snapshot's graph
  double millis = 0;
  size_t nodesBefore = 0, nodesAfter = 0;
};

struct Snapshot {
  std::string label;  // "import" for the first, then the pass spec
  // Shared, not owned: a pass that leaves the graph as it was (same
  // Graph::stamp) shares the snapshot before it, so a 20,000-node model's
  // cleanups that find nothing cost neither a copy nor a verification.
  std::shared_ptr<const Graph> graphPtr;
  PassRecord record;
  const Graph& graph() const { return *graphPtr; }
};

struct PipelineResult {
  std::vector<Snapshot> snapshots;  // [0] is the input graph
  std::vector<FusionDecision> decisions;
};

struct PipelineOptions {
  // A failing pass writes a reproducer (the graph it was given, every constant
  // in full, and its pass spec) into this folder; empty: the system temp folder.
  std::string reproducerDir;
  bool writeReproducer = true;
  // Called after each pass, before the verifier: instrumentation and fault
  // injection in tests. An error it returns fails the pass.
  std::function<Status(const PassSpec&, Graph&)> afterPass;
  // The target's f32 vector lanes (PassContext::vectorLanes); the session sets
  // the host's, so `layout` without a block follows the CPU the kernels run on.
  int vectorLanes = 8;
};

// Progress reports each pass; cancel stops between passes. The input is verified
// first. A pass error or a verifier failure after a pass stops the pipeline with
// a Status naming the pass and the reproducer file written for it.
Expected<PipelineResult> runPipeline(const Graph& input, const std::vector<PassSpec>& specs,
                                     const Progress& progress = {}, const CancelToken& cancel = {},
                                     const PipelineOptions& options = {});

// A reproducer: the graph text and the pipeline that failed on it.
struct Reproducer {
  Graph graph;
  std::string pipeline;
};
// Reads what a failing pipeline wrote; errors name the file.
Expected<Reproducer> readReproducer(const std::string& path);

// The default pipelines by optimization level (0..3; others clamp):
//   -O0  nothing
//   -O1  const-fold,cse,simplify,dce                      (cleanups, no fusion)
//   -O2  -O1 + fuse-patterns,fuse-ops{max-ops=8}          (the default)
//   -O3  -O2 with a larger fusion window (max-ops=16), then memory-plan (a report)
std::string pipelineForLevel(int level);
// The pipeline used when none is given: pipelineForLevel(2).
std::string defaultPipeline();

}  // namespace fuselens
