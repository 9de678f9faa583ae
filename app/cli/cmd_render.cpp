// `fuselens-cli render`: the graph view as an image, headless, through the
// same scope tree and scoped layout as the GUI (session/graphview/).
#include <cstdio>

#include "app/cli/cli_common.h"
#include "app/cli/commands.h"
#include "session/graphview/render.h"

namespace fuselens::cli {
namespace {

struct RenderArgs {
  std::string model;
  std::string passes = defaultPipelineText();
  graphview::RenderRequest request;
  InputArgs inputs;
  int runs = 5;
};

int runRender(RenderArgs& a) {
  Session session;
  if (Status s = openAndOptimize(session, a.model, a.passes, a.inputs); !s) return fail(s);
  if (a.request.heat || a.request.time) {
    auto inputs = loadInputs(session, a.inputs);
    if (!inputs) return fail(inputs.status());
    if (Status s = fitToInputs(session, *inputs); !s) return fail(s);
    if (a.request.heat) {
      auto rep =
          session.compare(*inputs, session.compareOptions, terminalProgress(), interruptToken());
      if (!rep) return fail(rep.status());
    }
    if (a.request.time) {
      ProfileRequest request;
      request.runs = a.runs;
      auto prof = session.profile(*inputs, request, terminalProgress(), interruptToken());
      if (!prof) return fail(prof.status());
    }
  }
  auto r = graphview::renderGraph(session, a.request, interruptToken());
  if (!r) return fail(r.status());
  std::printf("%s: %zu boxes (%zu scopes collapsed), %zu edges, layout %.0f ms, after %s\n",
              a.request.out.c_str(), r->boxes, r->collapsed, r->edges, r->layoutMs,
              r->snapshot.c_str());
  for (const std::string& note : r->notes) std::printf("note: %s\n", note.c_str());
  return kExitOk;
}

}  // namespace

void addRenderCommand(CLI::App& app, int& exitCode) {
  auto args = std::make_shared<RenderArgs>();
  CLI::App* cmd = app.add_subcommand(
      "render",
      "Draw the graph view to an SVG or PNG: name scopes collapsed, fused groups, "
      "rejected fusions, optionally the divergence heat and kernel times");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  cmd->add_option("--passes", args->passes, "Pipeline string")->capture_default_str();
  cmd->add_option("--after", args->request.after,
                  "The snapshot to draw: a pass name or spec, or its number (default: the last)");
  auto* scope = cmd->add_option("--scope", args->request.scope,
                                "Draw this name scope alone (\"/encoder/layer.3\")");
  cmd->add_option("--expand-depth", args->request.expandDepth,
                  "Open scopes down to this depth (default: collapse to about 200 boxes)")
      ->excludes(scope)
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--heat", args->request.heat,
                "Compile, compare with eager on random inputs, and fill by divergence");
  cmd->add_flag("--diff", args->request.diff,
                "Mark what the snapshot's pass changed: added ops green, changed violet, "
                "untouched scopes dimmed");
  cmd->add_flag("--time", args->request.time,
                "Compile, profile, and badge each collapsed scope with its kernels' time");
  cmd->add_option("--runs", args->runs, "Timed runs for --time (medians)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  addInputOptions(cmd, args->inputs);
  cmd->add_option("-o,--output", args->request.out, "graph.svg or graph.png")->required();
  cmd->callback([args, &exitCode] { exitCode = runRender(*args); });
}

}  // namespace fuselens::cli
