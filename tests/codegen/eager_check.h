// Compiled vs eager for the codegen tests: runs the eager interpreter on the
// graph, the pipeline (if any), compiles and runs, and returns the largest
// absolute difference over every graph output (INFINITY with a reason in
// `info` when a step fails or a shape/dtype differs; the loop IR otherwise).
#pragma once

#include <cmath>
#include <map>
#include <string>

#include "codegen/compiler.h"
#include "core/eager/interpreter.h"
#include "passes/pass_manager.h"

namespace fuselens::test {

inline double compiledVsEager(const Graph& g, const std::map<std::string, TensorData>& in,
                              const std::string& pipeline, std::string* info) {
  auto eager = runEager(g, in);
  if (!eager) return *info = "eager: " + eager.message(), INFINITY;
  Graph opt = g;
  if (!pipeline.empty()) {
    auto specs = parsePipeline(pipeline);
    if (!specs) return *info = "pipeline: " + specs.message(), INFINITY;
    auto r = runPipeline(g, *specs);
    if (!r) return *info = "pipeline: " + r.message(), INFINITY;
    opt = r->snapshots.back().graph();
  }
  CompileOptions opts;
  opts.fallback = false;  // a kernel the lowering refused must fail here, not run eagerly
  auto m = compileGraph(opt, opts);
  if (!m) return *info = "compile: " + m.message(), INFINITY;
  auto run = (*m)->run(in);
  if (!run) return *info = "run: " + run.message(), INFINITY;
  *info = (*m)->loopIrText();
  double worst = 0;
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    const TensorData* want = eager->find(g.outputs()[i]);
    const auto& got = (*run)[opt.outputs()[i].index];
    if (!want || !got || got->shape != want->shape || got->dtype != want->dtype) {
      *info = "output " + std::to_string(i) + " differs in shape or dtype\n" + *info;
      return INFINITY;
    }
    for (int64_t k = 0; k < want->numel(); ++k) {
      double d = std::fabs(got->at(k) - want->at(k));
      if (!(d <= worst)) worst = std::isnan(d) ? INFINITY : d;
    }
  }
  return worst;
}

}  // namespace fuselens::test
