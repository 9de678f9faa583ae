// fuselens-bench: how close the generated CPU kernels come to the machine, in
// one process so every ratio compares runs under the same conditions. Each
// figure is the median of several runs after a warm-up. Rows:
//   STREAM copy / triad (GB/s, the bandwidth references), a fused
//   elementwise chain and a broadcast chain on 16M floats, softmax rows (GB/s
//   and % of copy); MatMul 128x768x3072 and 1024^3 (GFLOP/s and % of OpenBLAS
//   sgemm on the same threads); MatMul+bias+GELU fused vs sgemm followed by a
//   separate compiled epilogue pass; a 3x3 conv 64ch 56x56, NCHW direct vs
//   NCHW8c / NCHW16c after the layout pass (GFLOP/s); compile time per backend step; eager vs
//   compiled per sample model, a transformer encoder block (make_transformer.py)
//   and a small ResNet-style CNN (make_cnn.py, NCHWc and default pipelines);
//   ONNX Runtime via bench/ort_bench.py when `onnxruntime` imports.
// Usage: fuselens-bench [--quick] [--json out.json] [--threads N]
#include "fma_peak.h"
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "codegen/compiler.h"
#include "codegen/runtime/runtime.h"
#include "codegen/target.h"
#include "core/eager/interpreter.h"
#include "core/io/npy.h"
#include "core/onnx/import.h"
#include "passes/pass_manager.h"

extern "C" void openblas_set_num_threads(int);
extern "C" char* openblas_get_corename(void);
#include <unistd.h>

using namespace fuselens;
using Clock = std::chrono::steady_clock;

namespace {

int gThreads = 2;
bool gQuick = false;

double medianSeconds(const std::function<void()>& f, int runs) {
  f();  // warm-up
  std::vector<double> t;
  for (int i = 0; i < runs; ++i) {
    auto t0 = Clock::now();
    f();
    t.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Splits [0, n) over gThreads std::threads (the STREAM reference and the
// separate epilogue pass use the same thread count as the kernels).
void parallelRange(int64_t n, const std::function<void(int64_t, int64_t)>& f) {
  std::vector<std::thread> ts;
  for (int t = 1; t < gThreads; ++t)
    ts.emplace_back([&, t] { f(n * t / gThreads, n * (t + 1) / gThreads); });
  f(0, n / gThreads);
  for (auto& t : ts) t.join();
}

TensorData randomTensor(const std::vector<int64_t>& shape, uint32_t seed) {
  TensorData t(DType::F32, shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = d(rng);
  return t;
}

TensorType f32(const std::vector<int64_t>& s) { return TensorType::of(DType::F32, s); }

struct Row {
  std::string name, metric;
  double value = 0, reference = 0;  // reference: what the ratio divides by
  std::string refName;
  std::string note;
};
std::vector<Row> gRows;
nlohmann::json gJson = nlohmann::json::object();

void addRow(Row r) {
  double ratio = r.reference > 0 ? r.value / r.reference : 0;
  std::printf("%-44s %10.2f %-8s %-22s %7s %s\n", r.name.c_str(), r.value, r.metric.c_str(),
              r.refName.c_str(),
              r.reference > 0 ? (std::to_string(int(ratio * 100 + 0.5)) + "%").c_str() : "",
              r.note.c_str());
  std::fflush(stdout);
  gJson["rows"].push_back({{"name", r.name},
                           {"metric", r.metric},
                           {"value", r.value},
                           {"reference", r.refName},
                           {"reference_value", r.reference},
                           {"ratio", ratio},
                           {"note", r.note}});
  gRows.push_back(std::move(r));
}

std::unique_ptr<CompiledModule> compile(const Graph& g, const CompileOptions& o = {}) {
  auto m = compileGraph(g, o);
  if (!m) {
    std::fprintf(stderr, "compile failed: %s\n", m.message().c_str());
    std::exit(1);
  }
  // FUSELENS_BENCH_DUMP=dir: the loop IR and LLVM IR of every module, to look at.
  if (const char* dir = std::getenv("FUSELENS_BENCH_DUMP")) {
    static int n = 0;
    std::string base = std::string(dir) + "/m" + std::to_string(n++);
    std::ofstream(base + ".loop") << (*m)->loopIrText();
    std::ofstream(base + ".ll") << (*m)->llvmIrText();
  }
  return std::move(*m);
}

// Times a module on inputs through the arena runtime, outputs preallocated
// (allocated by the warm-up run and reused), as a deployment would run it.
double timeModule(const CompiledModule& m, const std::map<std::string, TensorData>& in, int runs) {
  std::map<std::string, TensorData> out;
  return medianSeconds(
      [&] {
        Status s = m.runInto(in, out);
        if (!s) {
          std::fprintf(stderr, "run failed: %s\n", s.message().c_str());
          std::exit(1);
        }
      },
      runs);
}

// ---- bandwidth ----
double gCopy = 0;

void stream() {
  const int64_t n = 16 << 20;
  std::vector<float> a(size_t(n), 1.0f), b(size_t(n), 2.0f), c(size_t(n), 0.0f);
  parallelRange(n, [&](int64_t lo, int64_t hi) {  // first touch on the threads that use it
    for (int64_t i = lo; i < hi; ++i) a[i] = 1, b[i] = 2, c[i] = 0;
  });
  double tc = medianSeconds(
      [&] {
        parallelRange(
            n, [&](int64_t lo, int64_t hi) { std::memcpy(&c[lo], &a[lo], size_t(hi - lo) * 4); });
      },
      7);
  double tt = medianSeconds(
      [&] {
        parallelRange(n, [&](int64_t lo, int64_t hi) {
          for (int64_t i = lo; i < hi; ++i) a[i] = b[i] + 3.0f * c[i];
        });
      },
      7);
  gCopy = 2.0 * n * 4 / tc / 1e9;
  addRow({"STREAM copy 16M f32", "GB/s", gCopy, 0, "", ""});
  addRow({"STREAM triad 16M f32", "GB/s", 3.0 * n * 4 / tt / 1e9, gCopy, "STREAM copy", ""});
}

void elementwise() {
  const int64_t rows = 4096, cols = 4096;  // 16M floats
  {
    // y = sigmoid(relu(x * 1.5 + 0.25) - x) * x: one read, one write.
    Graph g;
    ValueId x = g.addInput("x", f32({rows, cols}));
    auto c = [&](float v, const char* name) {
      return g.addConstant(name, std::make_shared<const TensorData>(TensorData::fromVector(
                                     DType::F32, {}, std::vector<float>{v})));
    };
    auto op = [&](const char* o, std::vector<ValueId> in) {
      return g
          .node(g.addNode(
              o, in, {{std::string(o) + std::to_string(g.nodeIds().size()), f32({rows, cols})}}))
          .outputs[0];
    };
    ValueId t = op("Mul", {x, c(1.5f, "a")});
    t = op("Add", {t, c(0.25f, "b")});
    t = op("Relu", {t});
    t = op("Sub", {t, x});
    t = op("Sigmoid", {t});
    g.addOutput(op("Mul", {t, x}));
    g.markAsOriginal();
    auto specs = parsePipeline(defaultPipeline());
    auto res = runPipeline(g, *specs);
    Graph opt = res ? res->snapshots.back().graph : g;
    auto m = compile(opt);
    std::map<std::string, TensorData> in = {{"x", randomTensor({rows, cols}, 1)}};
    double t0 = timeModule(*m, in, 7);
    addRow({"fused chain (6 ops) 16M f32, " + std::to_string(m->kernels().size()) + " kernel",
            "GB/s", 2.0 * rows * cols * 4 / t0 / 1e9, gCopy, "STREAM copy", "target >= 80%"});
  }
  {
    // y = relu(x + bias[cols]) * z: broadcast operand, two streams in.
    Graph g;
    ValueId x = g.addInput("x", f32({rows, cols})), z = g.addInput("z", f32({rows, cols}));
    ValueId b = g.addConstant("bias", std::make_shared<const TensorData>(randomTensor({cols}, 3)));
    ValueId t = g.node(g.addNode("Add", {x, b}, {{"t", f32({rows, cols})}})).outputs[0];
    t = g.node(g.addNode("Relu", {t}, {{"r", f32({rows, cols})}})).outputs[0];
    g.addOutput(g.node(g.addNode("Mul", {t, z}, {{"y", f32({rows, cols})}})).outputs[0]);
    g.markAsOriginal();
    auto res = runPipeline(g, *parsePipeline(defaultPipeline()));
    auto m = compile(res ? res->snapshots.back().graph : g);
    std::map<std::string, TensorData> in = {{"x", randomTensor({rows, cols}, 1)},
                                            {"z", randomTensor({rows, cols}, 2)}};
    double t0 = timeModule(*m, in, 7);
    addRow({"broadcast chain (3 ops) 16M f32", "GB/s", 3.0 * rows * cols * 4 / t0 / 1e9, gCopy,
            "STREAM copy", "target >= 80%"});
  }
}

// Module and STREAM copy timed alternately, `rounds` medians each: the copy
// rate drifts by 2x within seconds on a shared machine, so a row op's % of
// copy is taken against the copy measured next to it. Returns the module's
// seconds and sets `copyGBs`.
double timeAgainstCopy(const CompiledModule& m, const std::map<std::string, TensorData>& in,
                       double& copyGBs, int rounds = 5) {
  const int64_t n = 16 << 20;
  static std::vector<float> a, c;
  if (a.empty()) {
    a.assign(size_t(n), 1.0f);
    c.assign(size_t(n), 0.0f);
  }
  auto copy = [&] {
    parallelRange(n, [&](int64_t lo, int64_t hi) {
      std::memcpy(&c[size_t(lo)], &a[size_t(lo)], size_t(hi - lo) * 4);
    });
  };
  std::vector<double> tm, tc;
  for (int r = 0; r < rounds; ++r) {
    tc.push_back(medianSeconds(copy, 3));
    tm.push_back(timeModule(m, in, 3));
  }
  std::sort(tm.begin(), tm.end());
  std::sort(tc.begin(), tc.end());
  copyGBs = 2.0 * n * 4 / tc[tc.size() / 2] / 1e9;
  return tm[tm.size() / 2];
}

void softmaxRows() {
  for (int64_t len : {128, 1024}) {
    int64_t rows = (16 << 20) / len;
    Graph g;
    ValueId x = g.addInput("x", f32({rows, len}));
    g.addOutput(g.node(g.addNode("Softmax", {x}, {{"y", f32({rows, len})}})).outputs[0]);
    auto m = compile(g);
    std::map<std::string, TensorData> in = {{"x", randomTensor({rows, len}, 1)}};
    double copy = 0, t0 = timeAgainstCopy(*m, in, copy);
    addRow({"softmax rows " + std::to_string(rows) + "x" + std::to_string(len), "GB/s",
            2.0 * rows * len * 4 / t0 / 1e9, copy, "copy (timed alongside)", "target >= 60%"});
  }
  for (int64_t len : {768, 4096}) {
    int64_t rows = (16 << 20) / len;
    Graph g;
    ValueId x = g.addInput("x", f32({rows, len}));
    ValueId sc = g.addConstant("scale", std::make_shared<const TensorData>(randomTensor({len}, 2)));
    ValueId b = g.addConstant("bias", std::make_shared<const TensorData>(randomTensor({len}, 3)));
    Attributes a;
    a.set("epsilon", 1e-5);
    g.addOutput(g.node(g.addNode("LayerNormalization", {x, sc, b}, {{"y", f32({rows, len})}}, a))
                    .outputs[0]);
    auto m = compile(g);
    std::map<std::string, TensorData> in = {{"x", randomTensor({rows, len}, 1)}};
    double copy = 0, t0 = timeAgainstCopy(*m, in, copy);
    addRow({"LayerNorm rows " + std::to_string(rows) + "x" + std::to_string(len), "GB/s",
            2.0 * rows * len * 4 / t0 / 1e9, copy, "copy (timed alongside)", "target >= 60%"});
  }
}

// ---- matmul ----
Graph matmulGraph(int64_t m, int64_t k, int64_t n, bool gelu, const TensorData& w,
                  const TensorData& bias) {
  Graph g;
  ValueId x = g.addInput("x", f32({m, k}));
  ValueId wv = g.addConstant("w", std::make_shared<const TensorData>(w));
  ValueId y = g.node(g.addNode("MatMul", {x, wv}, {{"mm", f32({m, n})}})).outputs[0];
  if (gelu) {
    // bias + GELU (tanh form): 0.5 y (1 + tanh(0.7978846 (y + 0.044715 y^3)))
    auto c = [&](float v, const std::string& name) {
      return g.addConstant(name, std::make_shared<const TensorData>(TensorData::fromVector(
                                     DType::F32, {}, std::vector<float>{v})));
    };
    int id = 0;
    auto op = [&](const char* o, std::vector<ValueId> in) {
      return g.node(g.addNode(o, in, {{"g" + std::to_string(id++), f32({m, n})}})).outputs[0];
    };
    ValueId bv = g.addConstant("bias", std::make_shared<const TensorData>(bias));
    ValueId h = op("Add", {y, bv});
    ValueId h3 = op("Mul", {op("Mul", {h, h}), h});
    ValueId inner =
        op("Mul", {op("Add", {h, op("Mul", {h3, c(0.044715f, "c0")})}), c(0.7978845608f, "c1")});
    ValueId t = op("Add", {op("Tanh", {inner}), c(1.0f, "one")});
    y = op("Mul", {op("Mul", {h, t}), c(0.5f, "half")});
  }
  g.addOutput(y);
  g.markAsOriginal();
  // -O3's larger fusion window holds MatMul + the 10-op epilogue in one group.
  auto res = runPipeline(g, *parsePipeline(pipelineForLevel(3)));
  return res ? res->snapshots.back().graph : g;
}

// The bias+GELU epilogue alone, on an [m, n] input (compiled by FuseLens too, so
// the comparison is "fused" vs "separate pass", not two implementations of tanh).
Graph epilogueGraph(int64_t m, int64_t n, const TensorData& bias) {
  Graph g;
  ValueId y = g.addInput("y", f32({m, n}));
  auto c = [&](float v, const std::string& name) {
    return g.addConstant(name, std::make_shared<const TensorData>(
                                   TensorData::fromVector(DType::F32, {}, std::vector<float>{v})));
  };
  int id = 0;
  auto op = [&](const char* o, std::vector<ValueId> in) {
    return g.node(g.addNode(o, in, {{"g" + std::to_string(id++), f32({m, n})}})).outputs[0];
  };
  ValueId h = op("Add", {y, g.addConstant("bias", std::make_shared<const TensorData>(bias))});
  ValueId h3 = op("Mul", {op("Mul", {h, h}), h});
  ValueId inner =
      op("Mul", {op("Add", {h, op("Mul", {h3, c(0.044715f, "c0")})}), c(0.7978845608f, "c1")});
  ValueId t = op("Add", {op("Tanh", {inner}), c(1.0f, "one")});
  g.addOutput(op("Mul", {op("Mul", {h, t}), c(0.5f, "half")}));
  g.markAsOriginal();
  auto res = runPipeline(g, *parsePipeline(defaultPipeline()));
  return res ? res->snapshots.back().graph : g;
}

// The measured FMA peak of gThreads threads (fma_peak.h); 0 until measured.
double gPeak = 0;

void fmaPeak() {
  gPeak = measureFmaPeakGflops(gThreads);
  addRow({"FMA peak f32 (measured, " + std::to_string(gThreads) + " threads)", "GFLOP/s", gPeak, 0,
          "", gPeak > 0 ? "independent vector FMAs at the widest width" : "no FMA unit found"});
}

// "; 62% of the measured FMA peak", or nothing before the peak is measured.
std::string ofPeak(double gflops) {
  if (gPeak <= 0) return "";
  return "; " + std::to_string(int(100 * gflops / gPeak + 0.5)) + "% of the measured FMA peak";
}

void matmul(int64_t m, int64_t k, int64_t n) {
  std::string shape = std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n);
  TensorData x = randomTensor({m, k}, 1), w = randomTensor({k, n}, 2), bias = randomTensor({n}, 3);
  std::vector<float> c(size_t(m * n));
  int runs = gQuick ? 3 : 9;
  double tb = medianSeconds(
      [&] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(m), int(n), int(k), 1.0f,
                    x.data<float>(), int(k), w.data<float>(), int(n), 0.0f, c.data(), int(n));
      },
      runs);
  double flops = 2.0 * m * n * k;
  addRow({"OpenBLAS sgemm " + shape, "GFLOP/s", flops / tb / 1e9, 0, "", ""});
  auto mod = compile(matmulGraph(m, k, n, false, w, bias));
  std::map<std::string, TensorData> in = {{"x", x}};
  double tf = timeModule(*mod, in, runs);
  double err = 0;
  std::map<std::string, TensorData> outs;
  if (mod->runInto(in, outs).isOk()) {
    const float* got = outs.begin()->second.data<float>();
    for (size_t i = 0; i < c.size(); ++i)
      err =
          std::max(err, double(std::fabs(got[i] - c[i])) / std::max(1.0, double(std::fabs(c[i]))));
  }
  addRow({"FuseLens MatMul " + shape, "GFLOP/s", flops / tf / 1e9, flops / tb / 1e9, "sgemm",
          "target >= 70%; max rel err vs sgemm " + std::to_string(err) + ofPeak(flops / tf / 1e9)});

  // Fused MatMul+bias+GELU vs sgemm then a separate epilogue pass.
  auto fused = compile(matmulGraph(m, k, n, true, w, bias));
  double tfused = timeModule(*fused, in, runs);
  auto epi = compile(epilogueGraph(m, n, bias));
  TensorData cy(DType::F32, {m, n});
  std::map<std::string, TensorData> ein = {{"y", cy}}, eout;
  double tsep = medianSeconds(
      [&] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(m), int(n), int(k), 1.0f,
                    x.data<float>(), int(k), w.data<float>(), int(n), 0.0f, ein["y"].data<float>(),
                    int(n));
        Status st = epi->runInto(ein, eout);
        (void)st;
      },
      runs);
  addRow({"MatMul+bias+GELU fused " + shape, "ms", tfused * 1e3, tsep * 1e3,
          "sgemm + epilogue pass",
          std::string("ratio < 100% means fused is faster") + " (" +
              std::to_string(fused->kernels().size()) + " kernel)"});
}

// ---- layout: a ResNet-style 3x3 conv, NCHW direct vs NCHW<b>c ----
// The same Conv+bias+Relu graph through fuse-ops alone (the NCHW direct conv)
// and through layout{block=b} first (ConvNCHWc, vectorized over b output
// channels); the blocked figure includes its ToNCHWc / FromNCHWc kernels.
void convLayout() {
  const int64_t c = 64, hw = 56;
  Graph g;
  ValueId x = g.addInput("x", f32({1, c, hw, hw}));
  ValueId w = g.addConstant("w", std::make_shared<TensorData>(randomTensor({c, c, 3, 3}, 2)));
  ValueId b = g.addConstant("b", std::make_shared<TensorData>(randomTensor({c}, 3)));
  Attributes a;
  a.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  ValueId y = g.node(g.addNode("Conv", {x, w, b}, {{"c", f32({1, c, hw, hw})}}, a)).outputs[0];
  g.addOutput(g.node(g.addNode("Relu", {y}, {{"y", f32({1, c, hw, hw})}})).outputs[0]);
  g.markAsOriginal();
  std::map<std::string, TensorData> in = {{"x", randomTensor({1, c, hw, hw}, 1)}};
  double flops = 2.0 * c * c * 9 * hw * hw;
  int runs = gQuick ? 3 : 9;
  double ref = 0;
  for (const char* pipeline : {"fuse-ops", "layout{block=8},fuse-ops", "layout{block=16},fuse-ops"}) {
    auto res = runPipeline(g, *parsePipeline(pipeline));
    if (!res) {
      addRow({std::string("conv 3x3 ") + pipeline, "n/a", 0, 0, "", "pipeline failed: " + res.message()});
      continue;
    }
    auto mod = compile(res->snapshots.back().graph);
    double gf = flops / timeModule(*mod, in, runs) / 1e9;
    std::string perKernel;  // "k0 0.31 ms, k1 9.80 ms, ..." where the module can profile
    if (auto prof = mod->profileKernels(in, runs))
      for (size_t k = 0; k < prof->size(); ++k)
        perKernel += (k ? ", " : "; ") + mod->kernels()[k].name + " " +
                     std::to_string((*prof)[k] * 1e3).substr(0, 5) + " ms";
    bool plain = ref == 0;
    std::string layout = plain ? "NCHW direct" : std::string(pipeline).find("16") != std::string::npos
                                                     ? "NCHW16c"
                                                     : "NCHW8c";
    addRow({"Conv3x3+bias+Relu 64ch 56x56 " + layout, "GFLOP/s", gf, ref, plain ? "" : "NCHW direct",
            std::to_string(mod->kernels().size()) + " kernels" + (plain ? "" : " incl. transforms") +
                ofPeak(gf) + perKernel});
    if (plain) ref = gf;
  }
}

// ---- compile time ----
void compileTimes() {
  TensorData w = randomTensor({768, 3072}, 2), bias = randomTensor({3072}, 3);
  auto t0 = Clock::now();
  Graph g = matmulGraph(128, 768, 3072, true, w, bias);
  double pipe = std::chrono::duration<double>(Clock::now() - t0).count();
  auto m = compile(g);
  CompileStats s = m->stats();
  addRow({"compile: pass pipeline (MatMul+GELU)", "ms", pipe * 1e3, 0, "", ""});
  addRow({"compile: lower + schedule + pack", "ms", s.lowerSeconds * 1e3, 0, "", ""});
  addRow({"compile: LLVM IR emit", "ms", s.llvmEmitSeconds * 1e3, 0, "", ""});
  addRow({"compile: LLVM -O3", "ms", s.llvmOptimizeSeconds * 1e3, 0, "", ""});
  addRow({"compile: LLVM codegen + JIT link", "ms", s.llvmCodegenSeconds * 1e3, 0, "", ""});
}

// ---- models ----
// The default pipeline with the blocked-layout pass (NCHW<b>c) ahead of fusion.
std::string layoutPipeline(int block) {
  return "const-fold,cse,simplify,dce,layout{block=" + std::to_string(block) +
         "},fuse-patterns,fuse-ops{max-ops=8}";
}

std::string runOrt(const std::string& model, const std::map<std::string, std::string>& npys,
                   int threads) {
  std::string script = std::string(FUSELENS_SOURCE_DIR) + "/bench/ort_bench.py";
  std::string cmd = "python3 " + script + " --threads " + std::to_string(threads) + " " + model;
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

// Eager vs compiled with each (label, pipeline); ONNX Runtime against the fastest.
void benchModel(const std::string& path, const std::string& name, int runs,
                const std::vector<std::pair<std::string, std::string>>& pipelines = {
                    {"", defaultPipeline()}}) {
  auto model = importOnnxFile(path);
  if (!model) {
    addRow({"model " + name, "n/a", 0, 0, "", "import failed: " + model.message()});
    return;
  }
  const Graph& g = model->graph;
  std::map<std::string, TensorData> in;
  std::map<std::string, std::string> npys;
  uint32_t seed = 1;
  for (ValueId v : g.inputs()) {
    auto s = g.value(v).type.staticShape();
    if (!s) {
      addRow({"model " + name, "n/a", 0, 0, "", "dynamic input shape"});
      return;
    }
    in[g.value(v).name] = randomTensor(*s, seed++);
    std::string npy = "/tmp/fuselens_bench_" + g.value(v).name + ".npy";
    if (writeNpy(npy, in[g.value(v).name]).isOk()) npys[g.value(v).name] = npy;
  }
  double te = medianSeconds(
      [&] {
        auto r = runEager(g, in, EagerOptions{false, {}});
      },
      std::max(3, runs / 4));
  // One compiled module per pipeline; each is checked against eager.
  struct Variant {
    std::string label;
    std::unique_ptr<CompiledModule> m;
    double err = 0;
  };
  std::vector<Variant> variants;
  auto eagerRef = runEager(g, in, EagerOptions{false, {}});
  for (const auto& [label, pipeline] : pipelines) {
    std::string tag = "model " + name + (label.empty() ? "" : " [" + label + "]");
    auto t0 = Clock::now();
    auto res = runPipeline(g, *parsePipeline(pipeline));
    if (!res) {
      addRow({tag, "n/a", 0, 0, "", "pipeline failed: " + res.message()});
      continue;
    }
    auto m = compileGraph(res->snapshots.back().graph, {});
    double tcomp = std::chrono::duration<double>(Clock::now() - t0).count();
    if (!m) {
      addRow({tag, "n/a", 0, 0, "", "compile failed: " + m.message()});
      continue;
    }
    std::map<std::string, TensorData> mout;
    double err = 0;
    if ((*m)->runInto(in, mout).isOk() && eagerRef)
      for (ValueId o : g.outputs())
        if (const TensorData* want = eagerRef->find(o); want && mout.count(g.value(o).name))
          for (int64_t i = 0; i < want->numel(); ++i)
            err = std::max(err, std::fabs(mout[g.value(o).name].at(i) - want->at(i)));
    addRow({tag + " compile (passes+LLVM)", "ms", tcomp * 1e3, 0, "", pipeline});
    variants.push_back({label, std::move(*m), err});
  }
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
    double best = 0;
    std::string bestLabel;
    for (Variant& v : variants) {
      double tc = timeModule(*v.m, in, runs);
      std::string tag = "model " + name + (v.label.empty() ? "" : " [" + v.label + "]");
      addRow({tag + " compiled " + th, unit, tc * scale, te * scale,
              "eager (" + std::to_string(gThreads) + "t)",
              "ratio = compiled/eager time; " + std::to_string(v.m->kernels().size()) +
                  " kernels; max abs err vs eager " + std::to_string(v.err)});
      if (best == 0 || tc < best) best = tc, bestLabel = v.label;
      // Per kernel (group): where the compiled time goes.
      if (auto prof = v.m->profileKernels(in, std::max(3, runs / 2)); prof && profile)
        for (size_t k = 0; k < prof->size(); ++k)
          addRow({"  " + th + " " + v.m->kernels()[k].name, "us", (*prof)[k] * 1e6, tc * 1e6,
                  "model compiled", "share of the model's time"});
    }
    std::string ort = runOrt(path, npys, threads);
    auto j = nlohmann::json::parse(ort, nullptr, false);
    std::string vs = "compiled " + th + (bestLabel.empty() ? "" : " [" + bestLabel + "]");
    if (j.is_object() && j.contains("median_us"))
      addRow({"model " + name + " ONNX Runtime " + th, unit,
              j["median_us"].get<double>() * scale / 1e6, best * scale, vs,
              "ratio = ORT/compiled time (> 100%: FuseLens faster)"});
    else
      addRow(
          {"model " + name + " ONNX Runtime " + th, "n/a", 0, 0, "", "onnxruntime not importable"});
    if (threads == 1 && gThreads == 1) break;
  }
  fuselens_set_max_threads(0);
}

void models() {
  std::string dir = std::string(FUSELENS_SOURCE_DIR) + "/samples";
  std::vector<std::string> paths;
  for (auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".onnx") paths.push_back(e.path().string());
  std::sort(paths.begin(), paths.end());
  for (const std::string& path : paths)
    benchModel(path, std::filesystem::path(path).filename().string(), 21);
  // A transformer block (seq 128, hidden 768), written by bench/make_transformer.py.
  std::string script = std::string(FUSELENS_SOURCE_DIR) + "/bench/make_transformer.py";
  std::string enc1 = "/tmp/fuselens_bench_encoder1.onnx";
  if (std::system(("python3 " + script + " --layers 1 --out " + enc1 + " 2>/dev/null").c_str()) ==
      0)
    benchModel(enc1, "encoder block s128 h768", gQuick ? 3 : 9);
  else
    addRow({"model encoder block", "n/a", 0, 0, "", "python3 with onnx not available"});
}

void cnnModel() {
  // A small ResNet-style CNN (bench/make_cnn.py): the NCHWc layout pass before
  // fusion with one vector register per channel block first (16 lanes on
  // AVX-512, 8 on AVX2), the other block size, and the default pipeline.
  std::string cnnScript = std::string(FUSELENS_SOURCE_DIR) + "/bench/make_cnn.py";
  std::string cnn = "/tmp/fuselens_bench_cnn.onnx";
  const int best = hostTarget().vectorBits >= 512 ? 16 : 8;
  if (std::system(("python3 " + cnnScript + " --out " + cnn + " 2>/dev/null").c_str()) == 0)
    benchModel(cnn, "small cnn 112", gQuick ? 5 : 15,
               {{"nchw" + std::to_string(best) + "c", layoutPipeline(best)},
                {"nchw" + std::to_string(24 - best) + "c", layoutPipeline(24 - best)},
                {"default", defaultPipeline()}});
  else
    addRow({"model small cnn", "n/a", 0, 0, "", "python3 with onnx not available"});
}

// Default-pipeline compile of a 12-layer encoder, including LLVM (target < 5 s).
void compile12() {
  std::string script = std::string(FUSELENS_SOURCE_DIR) + "/bench/make_transformer.py";
  std::string path = "/tmp/fuselens_bench_encoder12.onnx";
  if (std::system(("python3 " + script + " --layers 12 --out " + path + " 2>/dev/null").c_str()) !=
      0) {
    addRow({"compile 12-layer encoder", "n/a", 0, 0, "", "python3 with onnx not available"});
    return;
  }
  auto t0 = Clock::now();
  auto model = importOnnxFile(path);
  if (!model) {
    addRow({"compile 12-layer encoder", "n/a", 0, 0, "", "import failed: " + model.message()});
    return;
  }
  double timport = std::chrono::duration<double>(Clock::now() - t0).count();
  t0 = Clock::now();
  auto res = runPipeline(model->graph, *parsePipeline(defaultPipeline()));
  double tpipe = std::chrono::duration<double>(Clock::now() - t0).count();
  if (!res) {
    addRow({"compile 12-layer encoder", "n/a", 0, 0, "", "pipeline failed: " + res.message()});
    return;
  }
  t0 = Clock::now();
  auto m = compileGraph(res->snapshots.back().graph, {});
  double tcomp = std::chrono::duration<double>(Clock::now() - t0).count();
  if (!m) {
    addRow({"compile 12-layer encoder", "n/a", 0, 0, "", "compile failed: " + m.message()});
    return;
  }
  CompileStats st = (*m)->stats();
  char note[256];
  std::snprintf(note, sizeof note,
                "target < 5000 ms; import %.0f ms (not counted); lower+pack %.0f, LLVM emit %.0f, "
                "-O3 %.0f, codegen %.0f; %zu kernels",
                timport * 1e3, st.lowerSeconds * 1e3, st.llvmEmitSeconds * 1e3,
                st.llvmOptimizeSeconds * 1e3, st.llvmCodegenSeconds * 1e3, (*m)->kernels().size());
  addRow(
      {"compile 12-layer encoder (passes+lower+LLVM)", "ms", (tpipe + tcomp) * 1e3, 0, "", note});
}

}  // namespace

int main(int argc, char** argv) {
  std::string jsonPath = "fuselens_bench.json";
  gThreads = std::max(1, std::min(2, int(std::thread::hardware_concurrency())));
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--quick")
      gQuick = true;
    else if (a == "--json" && i + 1 < argc)
      jsonPath = argv[++i];
    else if (a == "--threads" && i + 1 < argc)
      gThreads = std::atoi(argv[++i]);
    else if (a == "--only" && i + 1 < argc)
      setenv("FUSELENS_BENCH_ONLY", argv[++i], 1);
    else {
      std::fprintf(stderr,
                   "usage: fuselens-bench [--quick] [--json out.json] [--threads N] [--only "
                   "stream,ew,softmax,matmul,conv,compile,models,cnn,compile12]\n");
      return 2;
    }
  }
  const CpuTarget& t = hostTarget();
  // OpenBLAS 0.3.21 does not know every AVX-512 CPU and falls back to its AVX2
  // (Haswell) kernels; the fair baseline on such a host is its SkylakeX kernel,
  // chosen when the library loads, hence the re-exec. An OPENBLAS_CORETYPE
  // already in the environment is respected (and printed).
  if (t.vectorBits >= 512 && !std::getenv("OPENBLAS_CORETYPE")) {
    setenv("OPENBLAS_CORETYPE", "SkylakeX", 1);
    execv("/proc/self/exe", argv);
    std::perror("re-exec with OPENBLAS_CORETYPE failed");
  }
  openblas_set_num_threads(gThreads);
  gJson["openblas_core"] = openblas_get_corename();
  std::printf("OpenBLAS core: %s\n", openblas_get_corename());
  gJson["host"] = {{"cpu", t.cpu},
                   {"vector_bits", t.vectorBits},
                   {"threads", t.threads},
                   {"bench_threads", gThreads}};
  std::printf("host %s, %d-bit vectors, %d hardware threads; benchmarks on %d threads\n",
              t.cpu.c_str(), t.vectorBits, t.threads, gThreads);
  std::printf("%-44s %10s %-8s %-22s %7s %s\n", "benchmark", "value", "unit", "vs", "ratio",
              "note");
  const char* only = std::getenv("FUSELENS_BENCH_ONLY");
  auto want = [&](const char* s) { return !only || std::strstr(only, s); };
  if (want("stream") || want("ew") || want("softmax")) stream();
  if (want("ew")) elementwise();
  if (want("softmax")) softmaxRows();
  if (want("matmul") || want("conv")) fmaPeak();
  if (want("matmul")) {
    matmul(128, 768, 3072);
    matmul(1024, 1024, 1024);
  }
  if (want("conv")) convLayout();
  if (want("compile")) compileTimes();
  if (want("models")) models();
  if (want("models") || want("cnn")) cnnModel();
  if (want("compile12")) compile12();
  std::ofstream(jsonPath) << gJson.dump(2) << "\n";
  std::printf("JSON: %s\n", jsonPath.c_str());
}
