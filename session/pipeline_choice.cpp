// Pipeline resolution and reproducer replay; see pipeline_choice.h.
#include "session/pipeline_choice.h"

#include <algorithm>

#include "passes/registry.h"

namespace fuselens {

std::string defaultPipelineText() { return defaultPipeline(); }
std::string pipelineTextForLevel(int level) { return pipelineForLevel(level); }

Expected<std::string> resolvePipeline(const PipelineChoice& choice, const std::string& fallback,
                                      std::vector<std::string>* warnings) {
  if (!choice.passes.empty() && choice.level >= 0)
    return Status::error("give --passes or -O, not both", "-O");
  std::string text = choice.level >= 0       ? pipelineForLevel(choice.level)
                     : choice.passes.empty() ? fallback
                                             : choice.passes;
  if (choice.disabled.empty()) return text;
  auto specs = parsePipeline(text);
  if (!specs) return specs.status();
  for (const std::string& name : choice.disabled) {
    if (!findPass(name))
      return Status::error("there is no pass named '" + name + "'", "--disable-pass");
    auto gone = std::remove_if(specs->begin(), specs->end(),
                               [&](const PassSpec& s) { return s.name == name; });
    if (gone == specs->end() && warnings)
      warnings->push_back("--disable-pass " + name + ": the pipeline has no such pass");
    specs->erase(gone, specs->end());
  }
  return pipelineString(*specs);
}

Expected<Replay> replayReproducer(const std::string& path, const PipelineChoice& choice,
                                  std::vector<std::string>* warnings, const Progress& progress,
                                  const CancelToken& cancel) {
  auto repro = readReproducer(path);
  if (!repro) return repro.status();
  auto pipeline = resolvePipeline(choice, repro->pipeline, warnings);
  if (!pipeline) return pipeline.status();
  auto specs = parsePipeline(*pipeline);
  if (!specs) return specs.status();
  PipelineOptions opts;
  opts.writeReproducer = false;  // replaying: the file at hand is the reproducer
  auto result = runPipeline(repro->graph, *specs, progress, cancel, opts);
  if (!result) return Status::error("reproduced: " + result.message(), path);
  return Replay{*pipeline, std::move(result->snapshots), result->decisions.size()};
}

}  // namespace fuselens
