// Whole-model rows: eager vs compiled on samples/*.onnx, a transformer encoder
// block (make_transformer.py) and a small ResNet-style CNN (make_cnn.py, NCHWc
// and default pipelines), at gThreads and one thread, with ONNX Runtime
// (ort_bench.py) on the same inputs when `onnxruntime` imports. Every model is
// opened, optimized and compiled through Session; the eager reference is
// Session::run(Engine::Eager).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "benchmarks.h"
#include "codegen/runtime/runtime.h"  // fuselens_set_max_threads: Session has no thread setting
#include "codegen/target.h"           // hostTarget: Session offers no host facts
#include "core/io/npy.h"
#include "session/pipeline_choice.h"

namespace fuselens::bench {
namespace {

using Tensors = std::map<std::string, TensorData>;

constexpr int kRounds = 3;              // alternating FuseLens / ONNX Runtime rounds
constexpr double kRoundSeconds = 0.05;  // the least time one side's round covers

// The default pipeline with its layout pass blocking by `block` channels
// (NCHW<block>c); the pass goes first when the default has none.
std::string layoutPipeline(int block) {
  auto specs = parsePipeline(defaultPipelineText());
  if (!specs) return defaultPipelineText();
  bool found = false;
  for (PassSpec& s : *specs)
    if (s.name == "layout") s.options["block"] = std::to_string(block), found = true;
  if (!found) specs->insert(specs->begin(), PassSpec{"layout", {{"block", std::to_string(block)}}});
  return pipelineString(*specs);
}

std::string runOrt(const std::string& model, const std::map<std::string, std::string>& npys,
                   int threads, int runs) {
  std::string script = std::string(FUSELENS_SOURCE_DIR) + "/bench/ort_bench.py";
  std::string cmd = "python3 " + script + " --threads " + std::to_string(threads) + " --runs " +
                    std::to_string(runs) + " " + model;
  for (auto& [name, path] : npys) cmd += " --input " + name + "=" + path;
  cmd += " 2>/dev/null";
  std::string out;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[512];
    while (std::fgets(buf, sizeof buf, p)) out += buf;
    if (pclose(p) != 0) return "";
  }
  return out;
}

// Writes each input as .npy for ort_bench.py; returns the files written by name.
std::map<std::string, std::string> writeNpys(const Tensors& in) {
  std::map<std::string, std::string> npys;
  for (const auto& [name, t] : in) {
    std::string npy = "/tmp/fuselens_bench_" + name + ".npy";
    if (writeNpy(npy, t).isOk()) npys[name] = npy;
  }
  return npys;
}

// Largest |got - want| over every output both runs produced; NaN when they
// share no output name, so a comparison that compared nothing shows.
double maxAbsErr(const Tensors& got, const Tensors& want) {
  double err = std::nan("");
  for (const auto& [name, w] : want)
    if (auto it = got.find(name); it != got.end()) {
      err = std::isnan(err) ? 0 : err;
      for (int64_t i = 0; i < w.numel(); ++i)
        err = std::max(err, std::fabs(it->second.at(i) - w.at(i)));
    }
  return err;
}

// One compiled module per pipeline, each in a session of its own, checked against eager.
struct Variant {
  std::string label, tag;
  Session session;
  double err = 0;
};

// Opens the model again, runs `pipeline` and compiles, timing passes + LLVM;
// a failure is a row and no variant.
void addVariant(std::vector<Variant>& variants, const std::string& path, const std::string& name,
                const std::string& label, const std::string& pipeline, const Tensors& in,
                const Tensors& eager) {
  Variant& v = variants.emplace_back();
  v.label = label;
  v.tag = "model " + name + (label.empty() ? "" : " [" + label + "]");
  auto failed = [&](const std::string& what, const Status& st) {
    addRow({v.tag, "n/a", 0, 0, "", what + " failed: " + st.message()});
    variants.pop_back();
  };
  if (Status st = v.session.open(path); !st) return failed("import", st);
  auto t0 = Clock::now();
  if (Status st = v.session.optimize(pipeline); !st) return failed("pipeline", st);
  if (Status st = compileModule(v.session); !st) return failed("compile", st);
  double tcomp = secondsSince(t0);
  Tensors out;
  if (v.session.compiled()->runInto(in, out).isOk()) v.err = maxAbsErr(out, eager);
  addRow({v.tag + " compile (passes+LLVM)", "ms", tcomp * 1e3, 0, "", pipeline});
}

// Eager vs compiled with each (label, pipeline); ONNX Runtime against the fastest.
void benchModel(const std::string& path, const std::string& name, int runs,
                const std::vector<std::pair<std::string, std::string>>& pipelines = {
                    {"", defaultPipelineText()}}) {
  Session reference;
  if (Status st = reference.open(path); !st) {
    addRow({"model " + name, "n/a", 0, 0, "", "import failed: " + st.message()});
    return;
  }
  auto random = reference.randomInputs(1);
  if (!random) {
    addRow({"model " + name, "n/a", 0, 0, "", "no random inputs: " + random.message()});
    return;
  }
  const Tensors& in = *random;
  std::map<std::string, std::string> npys = writeNpys(in);
  double te =
      medianSeconds([&] { auto r = reference.run(Engine::Eager, in); }, std::max(3, runs / 4));
  auto eager = reference.run(Engine::Eager, in);
  const Tensors noOutputs;
  std::vector<Variant> variants;
  variants.reserve(pipelines.size());
  for (const auto& [label, pipeline] : pipelines)
    addVariant(variants, path, name, label, pipeline, in, eager ? *eager : noOutputs);
  if (variants.empty()) return;
  // Milliseconds, or microseconds for the small sample models.
  const bool us = te < 1e-3;
  const double scale = us ? 1e6 : 1e3;
  const std::string unit = us ? "us" : "ms";
  addRow({"model " + name + " eager", unit, te * scale, 0, "", ""});
  const bool profile = !gQuick && (name.find("encoder") != std::string::npos ||
                                   name.find("cnn") != std::string::npos);
  for (int threads : {gThreads, 1}) {
    fuselens_set_max_threads(threads);
    std::string th = std::to_string(threads) + "t";
    // Both sides in alternating rounds, each side's best round kept: on a
    // shared host a burst of other work lands in one round, not in the
    // comparison. Runs per round cover at least kRoundSeconds, so a model of
    // 30 us is timed over thousands of runs, not 21.
    const int n = int(variants.size());
    std::vector<int> perRound(size_t(n) + 1, runs);
    std::vector<double> bestOf(size_t(n) + 1, 0);
    for (int v = 0; v < n; ++v) {
      double once = timeModule(*variants[size_t(v)].session.compiled(), in, 3);
      perRound[size_t(v)] = std::clamp(int(kRoundSeconds / std::max(once, 1e-7)), runs, 5000);
    }
    perRound[size_t(n)] = *std::max_element(perRound.begin(), perRound.end() - 1);
    bool ortOk = true;
    for (int r = 0; r < kRounds; ++r) {
      for (int v = 0; v < n; ++v) {
        double t = timeModule(*variants[size_t(v)].session.compiled(), in, perRound[size_t(v)]);
        double& b = bestOf[size_t(v)];
        b = b == 0 ? t : std::min(b, t);
      }
      auto j =
          nlohmann::json::parse(runOrt(path, npys, threads, perRound[size_t(n)]), nullptr, false);
      if (!j.is_object() || !j.contains("median_us")) {
        ortOk = false;
        break;
      }
      double t = j["median_us"].get<double>() / 1e6;
      bestOf[size_t(n)] = bestOf[size_t(n)] == 0 ? t : std::min(bestOf[size_t(n)], t);
    }
    double best = 0;
    std::string bestLabel;
    for (int v = 0; v < n; ++v) {
      const Variant& var = variants[size_t(v)];
      const CompiledModule& m = *var.session.compiled();
      double tc = bestOf[size_t(v)];
      addRow({var.tag + " compiled " + th, unit, tc * scale, te * scale,
              "eager (" + std::to_string(gThreads) + "t)",
              "ratio = compiled/eager time; " + std::to_string(m.kernels().size()) +
                  " kernels; max abs err vs eager " + std::to_string(var.err) + "; best of " +
                  std::to_string(kRounds) + " medians of " + std::to_string(perRound[size_t(v)])});
      if (best == 0 || tc < best) best = tc, bestLabel = var.label;
      // Per kernel (group): where the compiled time goes.
      if (auto prof = m.profileKernels(in, std::max(3, runs / 2)); prof && profile)
        for (size_t k = 0; k < prof->size(); ++k)
          addRow({"  " + th + " " + m.kernels()[k].name, "us", (*prof)[k] * 1e6, tc * 1e6,
                  "model compiled", "share of the model's time"});
    }
    std::string vs = "compiled " + th + (bestLabel.empty() ? "" : " [" + bestLabel + "]");
    if (ortOk)
      addRow({"model " + name + " ONNX Runtime " + th, unit, bestOf[size_t(n)] * scale,
              best * scale, vs,
              "ratio = ORT/compiled time (> 100%: FuseLens faster); same rounds"});
    else
      addRow(
          {"model " + name + " ONNX Runtime " + th, "n/a", 0, 0, "", "onnxruntime not importable"});
    if (threads == 1 && gThreads == 1) break;
  }
  fuselens_set_max_threads(0);
}

}  // namespace

void models() {
  std::string dir = std::string(FUSELENS_SOURCE_DIR) + "/samples";
  std::vector<std::string> paths;
  for (auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".onnx") paths.push_back(e.path().string());
  std::sort(paths.begin(), paths.end());
  for (const std::string& path : paths)
    benchModel(path, std::filesystem::path(path).filename().string(), 21);
  // A transformer block (seq 128, hidden 768), written by bench/make_transformer.py.
  std::string enc1 = "/tmp/fuselens_bench_encoder1.onnx";
  if (writeModel("make_transformer.py", "--layers 1", enc1))
    benchModel(enc1, "encoder block s128 h768", gQuick ? 3 : 9);
  else
    addRow({"model encoder block", "n/a", 0, 0, "", "python3 with onnx not available"});
}

void cnnModel() {
  // A small ResNet-style CNN (bench/make_cnn.py): the NCHWc layout pass before
  // fusion with one vector register per channel block first (16 lanes on
  // AVX-512, 8 on AVX2), the other block size, and the default pipeline.
  std::string cnn = "/tmp/fuselens_bench_cnn.onnx";
  const int best = hostTarget().vectorBits >= 512 ? 16 : 8;
  if (writeModel("make_cnn.py", "", cnn))
    benchModel(cnn, "small cnn 112", gQuick ? 5 : 15,
               {{"nchw" + std::to_string(best) + "c", layoutPipeline(best)},
                {"nchw" + std::to_string(24 - best) + "c", layoutPipeline(24 - best)},
                {"default", defaultPipelineText()}});
  else
    addRow({"model small cnn", "n/a", 0, 0, "", "python3 with onnx not available"});
}

}  // namespace fuselens::bench
