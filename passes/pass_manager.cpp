// The pass manager and its one instrumentation layer: after every pass it
// verifies, times and snapshots, so the GUI timeline and the CLI's IR dumps
// read the same records.
#include "passes/pass_manager.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/ir/printer.h"
#include "core/ir/verifier.h"
#include "core/support/atomic_file.h"
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
    std::string item =
        trim(body.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
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

std::string reproducerText(const Graph& before, const std::vector<PassSpec>& specs, size_t failed,
                           const std::string& message) {
  PrintOptions full;
  full.elideConstantsOver = -1;
  std::string text =
      "// fuselens reproducer: pass " + specs[failed].str() + " failed: " + message + "\n";
  text += "// pipeline: " + specs[failed].str() + "\n";
  text += "// full pipeline: " + pipelineString(specs) + " (this graph is the input of pass " +
          std::to_string(failed + 1) + ")\n";
  text += "// replay: fuselens-cli compile --reproduce <this file>\n";
  return text + printGraph(before, full);
}

// The pipeline's error for a failing pass, after writing its reproducer.
Status failure(const std::string& message, const Graph& before, const std::vector<PassSpec>& specs,
               size_t failed, const PipelineOptions& options) {
  const std::string where = "pass " + specs[failed].str();
  if (!options.writeReproducer) return Status::error(message, where);
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path dir =
      options.reproducerDir.empty() ? fs::temp_directory_path(ec) : fs::path(options.reproducerDir);
  std::string stem =
      "fuselens-reproducer-" + specs[failed].name + "-" +
      std::to_string(std::chrono::system_clock::now().time_since_epoch().count() % 1000000007);
  fs::path file = dir / (stem + ".fir");
  Status written =
      writeFileAtomically(file.string(), reproducerText(before, specs, failed, message));
  if (!written)
    return Status::error(message + " (no reproducer: " + written.message() + ")", where);
  return Status::error(message + "; reproducer written to " + file.string() +
                           " (replay: fuselens-cli compile --reproduce " + file.string() + ")",
                       where);
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
        return Expected<std::vector<PassSpec>>::error("unclosed '{' in the pipeline string",
                                                      "pass " + spec.name);
      FL_RETURN_IF_ERROR(
          parseOptions(spec.name, text.substr(end + 1, close - end - 1), spec.options));
      end = close + 1;
      while (end < text.size() && std::isspace(static_cast<unsigned char>(text[end]))) ++end;
      if (end < text.size() && text[end] != ',')
        return Expected<std::vector<PassSpec>>::error("expected ',' after '}'",
                                                      "pass " + spec.name);
    }
    if (spec.name.empty())
      return Expected<std::vector<PassSpec>>::error("empty pass name in the pipeline string");
    const PassInfo* info = findPass(spec.name);
    if (!info) {
      std::string known;
      for (const auto& p : passRegistry()) known += (known.empty() ? "" : ", ") + p.name;
      return Expected<std::vector<PassSpec>>::error("unknown pass '" + spec.name +
                                                    "' (known: " + known + ")");
    }
    for (const auto& [k, v] : spec.options)
      if (std::find(info->options.begin(), info->options.end(), k) == info->options.end())
        return Expected<std::vector<PassSpec>>::error("unknown option '" + k + "'",
                                                      "pass " + spec.name);
    specs.push_back(spec);
    i = end + 1;
  }
  return specs;
}

std::string pipelineString(const std::vector<PassSpec>& specs) {
  std::string s;
  for (const auto& spec : specs) s += (s.empty() ? "" : ",") + spec.str();
  return s;
}

std::string pipelineForLevel(int level) {
  const std::string cleanups = "const-fold,cse,simplify,dce";
  if (level <= 0) return "";
  if (level == 1) return cleanups;
  // fuse-patterns is in -O2. Multi-anchor groups (attention; two-reduction
  // LayerNorm and softmax) are on through the passes' own option default, not
  // spelled here: codegen lowers a group's anchors as consecutive stages of one
  // kernel, and a hand-written pipeline (`fuse-patterns,fuse-ops{max-ops=12}`)
  // then forms the same groups as -O2. multi-anchor=0 gives one anchor per kernel.
  // Both block convolution regions to NCHW<b>c with b the target's vector
  // width (`layout` without a block: 16 on AVX-512, 8 on AVX2 and below).
  // Blocking was measured 20-30x faster than the NCHW direct conv on a small
  // ResNet (29 ms -> 1.7 ms). On an AVX-512 host (2 cores, one run of
  // bench/realworld_speed.py) 16 beat 8 on every real model: magika 8.1 ->
  // 6.2 ms, PP-OCRv4 rec 16.9 -> 14.4 ms, det 2.27 -> 2.12 ms, PicoDet 74 ->
  // 61 ms, PP-LCNet 3.36 -> 2.92 ms, cls even (0.55 ms), one thread.
  // The transforms fold into the Conv groups beside them (layout-prologue /
  // -epilogue), so the default adds no kernels; compare undoes the layout, so
  // every boundary tensor is still compared in NCHW.
  // A 12-op window holds a convolution with its BatchNorm arithmetic and a
  // hardswish (11 ops), which an 8-op window split: PP-OCRv4 det and rec go
  // from 102 and 104 kernels to 78 and 76 (TVM's FuseOps makes 81 and 95), the
  // kernels' summed time falls (det 3.85 -> 3.07 ms, rec 19.1 -> 18.6 ms, one
  // thread) and so does compile time (det 7.0 -> 6.2 s cold).
  if (level == 2) return cleanups + ",layout,fuse-patterns,fuse-ops{max-ops=12}";
  return cleanups + ",layout,fuse-patterns,fuse-ops{max-ops=16},memory-plan";
}

std::string defaultPipeline() { return pipelineForLevel(2); }

Expected<Reproducer> readReproducer(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Expected<Reproducer>::error("cannot open the reproducer file", path);
  std::stringstream text;
  text << in.rdbuf();
  const std::string body = text.str();
  const std::string key = "// pipeline: ";
  size_t at = body.find(key);
  if (at == std::string::npos)
    return Expected<Reproducer>::error("no '// pipeline: ' line: this is not a fuselens reproducer",
                                       path);
  size_t end = body.find('\n', at);
  std::string pipeline = trim(body.substr(
      at + key.size(), end == std::string::npos ? std::string::npos : end - at - key.size()));
  auto g = parseGraph(body);
  if (!g) return Expected<Reproducer>::error(g.message(), path);
  return Reproducer{std::move(*g), pipeline};
}

Expected<PipelineResult> runPipeline(const Graph& input, const std::vector<PassSpec>& specs,
                                     const Progress& progress, const CancelToken& cancel,
                                     const PipelineOptions& options) {
  if (Status s = verifyGraph(input); !s)
    return Status::error("the input graph fails verification: " + s.message(), "pipeline");
  PipelineResult result;
  result.snapshots.push_back(Snapshot{"import", std::make_shared<const Graph>(input), {}});
  result.snapshots.back().record.pass = "import";
  result.snapshots.back().record.nodesBefore = result.snapshots.back().record.nodesAfter =
      input.nodeCount();
  Graph g = input;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (cancel.cancelled()) return Expected<PipelineResult>::error("cancelled", "pipeline");
    report(progress, double(i) / double(specs.size()), "pass " + specs[i].str());
    auto pass = findPass(specs[i].name)->create(specs[i].options);
    if (!pass) return pass.status();
    PassContext ctx;
    ctx.cancel = cancel;
    for (const PassSpec& s : specs) ctx.pipeline.push_back(s.name);
    ctx.position = i;
    ctx.vectorLanes = options.vectorLanes;
    PassRecord rec;
    rec.pass = specs[i].str();
    rec.nodesBefore = g.nodeCount();
    // The reproducer's input: the last snapshot is the graph this pass starts
    // from, so no copy (a 20,000-node graph costs ~10 ms to copy and free).
    const Graph& before = result.snapshots.back().graph();
    auto t0 = std::chrono::steady_clock::now();
    PassResult r = (*pass)->run(g, ctx);
    rec.millis =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (r.status && options.afterPass) r.status = options.afterPass(specs[i], g);
    if (!r.status) {
      if (cancel.cancelled()) return Status::error("cancelled", "pass " + rec.pass);
      return failure(r.status.message(), before, specs, i, options);
    }
    // An unchanged stamp means the graph is the one verified before.
    const bool same = g.stamp() == before.stamp() && g.name == before.name;
    Status verified = same ? Status::ok() : verifyGraph(g, &input);
    if (!verified)
      return failure("the graph fails verification after this pass: " + verified.message(), before,
                     specs, i, options);
    rec.changed = r.changed;
    rec.stats = r.stats;
    rec.diagnostics = r.diagnostics;
    result.decisions.insert(result.decisions.end(), ctx.decisions.begin(), ctx.decisions.end());
    rec.decisions = std::move(ctx.decisions);
    rec.bufferPlan = ctx.bufferPlan;
    rec.nodesAfter = g.nodeCount();
    std::string name = rec.pass;
    // The last pass's graph is not needed again: moved, not copied.
    std::shared_ptr<const Graph> after = same ? result.snapshots.back().graphPtr
                                         : i + 1 == specs.size()
                                             ? std::make_shared<const Graph>(std::move(g))
                                             : std::make_shared<const Graph>(g);
    result.snapshots.push_back(Snapshot{std::move(name), std::move(after), std::move(rec)});
  }
  report(progress, 1.0, "pipeline done");
  return result;
}

}  // namespace fuselens
