// Which pipeline a user chose, resolved to one pipeline string: a preset level
// (-O0..-O3), an explicit pass string, passes dropped by name; and the replay
// of a reproducer a failing pass wrote. The faces parse flags or read a box;
// the resolution lives here so both say the same thing about a bad choice.
#pragma once

#include <string>
#include <vector>

#include "core/support/cancel.h"
#include "core/support/status.h"
#include "passes/pass_manager.h"

namespace fuselens {

struct PipelineChoice {
  std::string passes;                 // explicit pipeline string; empty: none given
  int level = -1;                     // -O level; -1: none given
  std::vector<std::string> disabled;  // pass names to drop
};

// The pipeline string of `choice`; `fallback` when neither passes nor a level
// is given. Giving both, or disabling a pass that does not exist, is an error;
// disabling one the pipeline does not run adds a warning.
Expected<std::string> resolvePipeline(const PipelineChoice& choice, const std::string& fallback,
                                      std::vector<std::string>* warnings = nullptr);

// The pipeline used when none is given (-O2), and each level's.
std::string defaultPipelineText();
std::string pipelineTextForLevel(int level);

struct Replay {
  std::string pipeline;
  std::vector<Snapshot> snapshots;
  size_t decisions = 0;
};
// Replays the reproducer at `path` with its own pipeline, or `choice`'s when
// one is given; no reproducer is written while replaying.
Expected<Replay> replayReproducer(const std::string& path, const PipelineChoice& choice,
                                  std::vector<std::string>* warnings = nullptr,
                                  const Progress& progress = {}, const CancelToken& cancel = {});

}  // namespace fuselens
