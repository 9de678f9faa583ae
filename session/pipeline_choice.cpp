// Pipeline resolution and reproducer replay; see pipeline_choice.h.
#include "session/pipeline_choice.h"

#include <algorithm>

#include "codegen/target.h"
#include "passes/layout.h"
#include "passes/registry.h"

namespace fuselens {

std::string defaultPipelineText() { return defaultPipeline(); }
std::string pipelineTextForLevel(int level) { return pipelineForLevel(level); }

PipelineOptions hostPipelineOptions() {
  PipelineOptions o;
  o.vectorLanes = hostTarget().vectorLanes();
  return o;
}

int hostLayoutBlock() { return layoutBlockFor(hostTarget().vectorLanes()); }

Expected<std::string> resolvePipeline(const PipelineChoice& choice, const std::string& fallback,
                                      std::vector<std::string>* warnings) {
  if (!choice.passes.empty() && choice.level >= 0)
    return Status::error("give --passes or -O, not both", "-O");
  std::string chosen = choice.level >= 0       ? pipelineForLevel(choice.level)
                       : choice.passes.empty() ? fallback
                                               : choice.passes;
  auto text = withPrecision(chosen, choice.precision);
  if (!text) return text.status();
  if (choice.disabled.empty()) return *text;
  auto specs = parsePipeline(*text);
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

Expected<std::string> withPrecision(const std::string& pipeline, const std::string& precision) {
  if (precision != "f32" && precision != "f16" && precision != "bf16")
    return Status::error("'" + precision + "' is not a precision; use f32, f16 or bf16",
                         "--precision");
  if (precision == "f32") return pipeline;
  auto specs = parsePipeline(pipeline);
  if (!specs) return specs.status();
  auto same = [](const PassSpec& s) { return s.name == "reduce-precision"; };
  if (auto it = std::find_if(specs->begin(), specs->end(), same); it != specs->end()) {
    it->options["dtype"] = precision;
    return pipelineString(*specs);
  }
  // Memory planning sizes buffers by dtype, so it runs on the reduced graph.
  auto plan = std::find_if(specs->begin(), specs->end(),
                           [](const PassSpec& s) { return s.name == "memory-plan"; });
  specs->insert(plan, PassSpec{"reduce-precision", {{"dtype", precision}}});
  return pipelineString(*specs);
}

Expected<std::string> replacePrecision(const std::string& pipeline, const std::string& precision) {
  auto specs = parsePipeline(pipeline);
  if (!specs) return specs.status();
  specs->erase(std::remove_if(specs->begin(), specs->end(),
                              [](const PassSpec& s) { return s.name == "reduce-precision"; }),
               specs->end());
  return withPrecision(pipelineString(*specs), precision);
}

std::string precisionOf(const std::string& pipeline) {
  auto specs = parsePipeline(pipeline);
  if (!specs) return "f32";
  for (const PassSpec& s : *specs)
    if (s.name == "reduce-precision") {
      auto it = s.options.find("dtype");
      return it == s.options.end() ? "f16" : it->second;
    }
  return "f32";
}

std::string precisionLine(const std::string& pipeline) {
  const std::string p = precisionOf(pipeline);
  if (p == "f32") return {};
  return "precision " + p + ": tensors between kernels stored in " + p +
         ", arithmetic in f32, graph inputs and outputs in f32";
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
  PipelineOptions opts = hostPipelineOptions();
  opts.writeReproducer = false;  // replaying: the file at hand is the reproducer
  auto result = runPipeline(repro->graph, *specs, progress, cancel, opts);
  if (!result) return Status::error("reproduced: " + result.message(), path);
  return Replay{*pipeline, std::move(result->snapshots), result->decisions.size()};
}

}  // namespace fuselens
