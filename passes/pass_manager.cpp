// The pass manager and its one instrumentation layer: after every pass it
// verifies, times and snapshots, so the GUI timeline and the CLI's IR dumps
// read the same records.
#include "passes/pass_manager.h"

#include <algorithm>
#include <cctype>
#include <chrono>

#include "core/ir/verifier.h"
#include "passes/registry.h"

namespace fuselens {
namespace {

std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t\n"), b = s.find_last_not_of(" \t\n");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

Status parseOptions(const std::string& pass, const std::string& body, PassOptions& out) {
  size_t start = 0;
  while (start <= body.size()) {
    size_t comma = body.find(',', start);
    std::string item = trim(body.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (!item.empty()) {
      size_t eq = item.find('=');
      if (eq == std::string::npos)
        return Status::error("option '" + item + "' needs the form key=value", "pass " + pass);
      out[trim(item.substr(0, eq))] = trim(item.substr(eq + 1));
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return Status::ok();
}

}  // namespace

std::string PassSpec::str() const {
  if (options.empty()) return name;
  std::string s = name + "{";
  bool first = true;
  for (const auto& [k, v] : options) {
    s += (first ? "" : ",") + k + "=" + v;
    first = false;
  }
  return s + "}";
}

Expected<std::vector<PassSpec>> parsePipeline(const std::string& text) {
  std::vector<PassSpec> specs;
  size_t i = 0;
  while (i < text.size()) {
    size_t end = i;
    while (end < text.size() && text[end] != ',' && text[end] != '{') ++end;
    PassSpec spec;
    spec.name = trim(text.substr(i, end - i));
    if (end < text.size() && text[end] == '{') {
      size_t close = text.find('}', end);
      if (close == std::string::npos)
        return Expected<std::vector<PassSpec>>::error("unclosed '{' in the pipeline string", "pass " + spec.name);
      FL_RETURN_IF_ERROR(parseOptions(spec.name, text.substr(end + 1, close - end - 1), spec.options));
      end = close + 1;
      while (end < text.size() && std::isspace(static_cast<unsigned char>(text[end]))) ++end;
      if (end < text.size() && text[end] != ',')
        return Expected<std::vector<PassSpec>>::error("expected ',' after '}'", "pass " + spec.name);
    }
    if (spec.name.empty()) return Expected<std::vector<PassSpec>>::error("empty pass name in the pipeline string");
    const PassInfo* info = findPass(spec.name);
    if (!info) {
      std::string known;
      for (const auto& p : passRegistry()) known += (known.empty() ? "" : ", ") + p.name;
      return Expected<std::vector<PassSpec>>::error("unknown pass '" + spec.name + "' (known: " + known + ")");
    }
    for (const auto& [k, v] : spec.options)
      if (std::find(info->options.begin(), info->options.end(), k) == info->options.end())
        return Expected<std::vector<PassSpec>>::error("unknown option '" + k + "'", "pass " + spec.name);
    specs.push_back(spec);
    i = end + 1;
  }
  return specs;
}

std::string defaultPipeline() { return "dce,fuse-ops{max-ops=8}"; }

Expected<PipelineResult> runPipeline(const Graph& input, const std::vector<PassSpec>& specs,
                                     const Progress& progress, const CancelToken& cancel) {
  PipelineResult result;
  result.snapshots.push_back(Snapshot{"import", input, {}});
  result.snapshots.back().record.pass = "import";
  result.snapshots.back().record.nodesBefore = result.snapshots.back().record.nodesAfter = input.nodeCount();
  Graph g = input;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (cancel.cancelled()) return Expected<PipelineResult>::error("cancelled", "pipeline");
    report(progress, double(i) / double(specs.size()), "pass " + specs[i].str());
    auto pass = findPass(specs[i].name)->create(specs[i].options);
    if (!pass) return pass.status();
    PassContext ctx;
    ctx.cancel = cancel;
    PassRecord rec;
    rec.pass = specs[i].str();
    rec.nodesBefore = g.nodeCount();
    auto t0 = std::chrono::steady_clock::now();
    PassResult r = (*pass)->run(g, ctx);
    rec.millis = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (!r.status) return Status::error(r.status.message(), "pass " + rec.pass);
    Status verified = verifyGraph(g, &input);
    if (!verified) return Status::error("the graph fails verification after this pass: " + verified.message(),
                                        "pass " + rec.pass);
    rec.changed = r.changed;
    rec.stats = r.stats;
    rec.diagnostics = r.diagnostics;
    rec.decisions = ctx.decisions;
    rec.nodesAfter = g.nodeCount();
    result.decisions.insert(result.decisions.end(), ctx.decisions.begin(), ctx.decisions.end());
    result.snapshots.push_back(Snapshot{rec.pass, g, rec});
  }
  report(progress, 1.0, "pipeline done");
  return result;
}

}  // namespace fuselens
