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
  std::string precision = "f32";      // --precision: f32, f16 or bf16 (withPrecision)
};

// Pipeline options for kernels compiled for this host: its vector width
// (`layout` without a block blocks to it). Every pipeline the session runs
// starts from these.
PipelineOptions hostPipelineOptions();
// The block `layout` without one picks for this host: 16 or 8.
int hostLayoutBlock();

// The pipeline string of `choice`; `fallback` when neither passes nor a level
// is given. Giving both, or disabling a pass that does not exist, is an error;
// disabling one the pipeline does not run adds a warning.
Expected<std::string> resolvePipeline(const PipelineChoice& choice, const std::string& fallback,
                                      std::vector<std::string>* warnings = nullptr);

// `pipeline` storing tensors between kernels in `precision`: "f32" leaves it
// as it is; "f16" or "bf16" adds reduce-precision{dtype=...} after the fusion
// passes, before memory-plan (or replaces the dtype of one already there).
// Any other value is an error naming it and the allowed ones.
Expected<std::string> withPrecision(const std::string& pipeline, const std::string& precision);
// `pipeline` with its precision set to `precision`: any reduce-precision is
// dropped first, so "f32" is the pipeline without it (the GUI's Precision menu).
Expected<std::string> replacePrecision(const std::string& pipeline, const std::string& precision);
// The storage precision a pipeline asks for: "f32" unless it runs reduce-precision.
std::string precisionOf(const std::string& pipeline);

// "precision f16: tensors between kernels stored in f16, arithmetic in f32, graph
// inputs and outputs in f32" for a pipeline that reduces precision; empty at f32.
// Reports print it above their tables, in both faces.
std::string precisionLine(const std::string& pipeline);

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
