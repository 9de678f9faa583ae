// Kernel-level rows: STREAM bandwidth, fused elementwise chains, softmax and
// LayerNorm rows, MatMul against OpenBLAS sgemm (plain and with a fused
// bias+GELU epilogue), and a 3x3 conv in NCHW vs NCHW<b>c. Every graph is built
// in memory and compiled through Session (compileGraphIn).
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>

#include "benchmarks.h"
#include "codegen/runtime/machine_peaks.h"
#include "session/pipeline_choice.h"

namespace fuselens::bench {
namespace {

const int64_t kStreamFloats = 16 << 20;

void copyRange(std::vector<float>& to, const std::vector<float>& from) {
  parallelRange(kStreamFloats, [&](int64_t lo, int64_t hi) {
    std::memcpy(&to[size_t(lo)], &from[size_t(lo)], size_t(hi - lo) * 4);
  });
}

// Appends bias + GELU (tanh form) to y [m, n]:
// 0.5 h (1 + tanh(0.7978846 (h + 0.044715 h^3))), h = y + bias.
ValueId addBiasGelu(Graph& g, ValueId y, int64_t m, int64_t n, const TensorData& bias) {
  int id = 0;
  auto op = [&](const char* o, std::vector<ValueId> in) {
    return g.node(g.addNode(o, in, {{"g" + std::to_string(id++), f32({m, n})}})).outputs[0];
  };
  ValueId h = op("Add", {y, g.addConstant("bias", std::make_shared<const TensorData>(bias))});
  ValueId h3 = op("Mul", {op("Mul", {h, h}), h});
  ValueId inner = op("Mul", {op("Add", {h, op("Mul", {h3, scalar(g, 0.044715f, "c0")})}),
                             scalar(g, 0.7978845608f, "c1")});
  ValueId t = op("Add", {op("Tanh", {inner}), scalar(g, 1.0f, "one")});
  return op("Mul", {op("Mul", {h, t}), scalar(g, 0.5f, "half")});
}

// The bias+GELU epilogue alone, on an [m, n] input (compiled by FuseLens too, so
// the comparison is "fused" vs "separate pass", not two implementations of tanh).
Graph epilogueGraph(int64_t m, int64_t n, const TensorData& bias) {
  Graph g;
  g.addOutput(addBiasGelu(g, g.addInput("y", f32({m, n})), m, n, bias));
  return g;
}

// Module and STREAM copy timed alternately, `rounds` medians each: the copy
// rate drifts by 2x within seconds on a shared machine, so a row op's % of
// copy is taken against the copy measured next to it. Returns the module's
// seconds and sets `copyGBs`.
double timeAgainstCopy(const CompiledModule& m, const std::map<std::string, TensorData>& in,
                       double& copyGBs, int rounds = 5) {
  static std::vector<float> a, c;
  if (a.empty()) {
    a.assign(size_t(kStreamFloats), 1.0f);
    c.assign(size_t(kStreamFloats), 0.0f);
  }
  std::vector<double> tm, tc;
  for (int r = 0; r < rounds; ++r) {
    tc.push_back(medianSeconds([&] { copyRange(c, a); }, 3));
    tm.push_back(timeModule(m, in, 3));
  }
  std::sort(tm.begin(), tm.end());
  std::sort(tc.begin(), tc.end());
  copyGBs = 2.0 * kStreamFloats * 4 / tc[tc.size() / 2] / 1e9;
  return tm[tm.size() / 2];
}

// A row op on [rows, len] timed against copy: GB/s of one read and one write.
void rowOpRow(const std::string& name, Graph g, int64_t rows, int64_t len) {
  Session s;
  const CompiledModule& m = compileGraphIn(s, std::move(g), name);
  std::map<std::string, TensorData> in = {{"x", randomTensor({rows, len}, 1)}};
  double copy = 0, t0 = timeAgainstCopy(m, in, copy);
  addRow({name + " " + std::to_string(rows) + "x" + std::to_string(len), "GB/s",
          2.0 * rows * len * 4 / t0 / 1e9, copy, "copy (timed alongside)", "target >= 70%"});
}

void sgemm(int64_t m, int64_t k, int64_t n, const TensorData& x, const TensorData& w, float* c) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(m), int(n), int(k), 1.0f,
              x.data<float>(), int(k), w.data<float>(), int(n), 0.0f, c, int(n));
}

// OpenBLAS's worker threads spin for 2^28 cycles (~0.1 s) after a call before
// they sleep: FuseLens timed in that window shares the 2 cores with a spinner
// and measured half its speed (MatMul 128x768x3072 at 68% of sgemm, 121% once
// the spin had ended). Waiting it out keeps each side's time its own.
void letBlasThreadsSleep() { std::this_thread::sleep_for(std::chrono::milliseconds(250)); }

// Largest |got - want| / max(1, |want|) over the module's single output.
double maxRelErr(const CompiledModule& m, const std::map<std::string, TensorData>& in,
                 const std::vector<float>& want) {
  std::map<std::string, TensorData> outs;
  double err = 0;
  if (!m.runInto(in, outs).isOk()) return err;
  const float* got = outs.begin()->second.data<float>();
  for (size_t i = 0; i < want.size(); ++i)
    err = std::max(err,
                   double(std::fabs(got[i] - want[i])) / std::max(1.0, double(std::fabs(want[i]))));
  return err;
}

}  // namespace

Graph matmulGraph(int64_t m, int64_t k, int64_t n, bool gelu, const TensorData& w,
                  const TensorData& bias) {
  Graph g;
  ValueId x = g.addInput("x", f32({m, k}));
  ValueId wv = g.addConstant("w", std::make_shared<const TensorData>(w));
  ValueId y = g.node(g.addNode("MatMul", {x, wv}, {{"mm", f32({m, n})}})).outputs[0];
  g.addOutput(gelu ? addBiasGelu(g, y, m, n, bias) : y);
  return g;
}

void stream() {
  const int64_t n = kStreamFloats;
  std::vector<float> a(size_t(n), 1.0f), b(size_t(n), 2.0f), c(size_t(n), 0.0f);
  parallelRange(n, [&](int64_t lo, int64_t hi) {  // first touch on the threads that use it
    for (int64_t i = lo; i < hi; ++i) a[i] = 1, b[i] = 2, c[i] = 0;
  });
  double tc = medianSeconds([&] { copyRange(c, a); }, 7);
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
    auto op = [&](const char* o, std::vector<ValueId> in) {
      return g
          .node(g.addNode(
              o, in, {{std::string(o) + std::to_string(g.nodeIds().size()), f32({rows, cols})}}))
          .outputs[0];
    };
    ValueId t = op("Mul", {x, scalar(g, 1.5f, "a")});
    t = op("Add", {t, scalar(g, 0.25f, "b")});
    t = op("Relu", {t});
    t = op("Sub", {t, x});
    t = op("Sigmoid", {t});
    g.addOutput(op("Mul", {t, x}));
    Session s;
    const CompiledModule& m = compileGraphIn(s, std::move(g), "fused chain", defaultPipelineText());
    std::map<std::string, TensorData> in = {{"x", randomTensor({rows, cols}, 1)}};
    double copy = 0, t0 = timeAgainstCopy(m, in, copy);
    addRow({"fused chain (6 ops) 16M f32, " + std::to_string(m.kernels().size()) + " kernel",
            "GB/s", 2.0 * rows * cols * 4 / t0 / 1e9, copy, "copy (timed alongside)",
            "target >= 80%"});
  }
  {
    // y = relu(x + bias[cols]) * z: broadcast operand, two streams in.
    Graph g;
    ValueId x = g.addInput("x", f32({rows, cols})), z = g.addInput("z", f32({rows, cols}));
    ValueId b = g.addConstant("bias", std::make_shared<const TensorData>(randomTensor({cols}, 3)));
    ValueId t = g.node(g.addNode("Add", {x, b}, {{"t", f32({rows, cols})}})).outputs[0];
    t = g.node(g.addNode("Relu", {t}, {{"r", f32({rows, cols})}})).outputs[0];
    g.addOutput(g.node(g.addNode("Mul", {t, z}, {{"y", f32({rows, cols})}})).outputs[0]);
    Session s;
    const CompiledModule& m =
        compileGraphIn(s, std::move(g), "broadcast chain", defaultPipelineText());
    std::map<std::string, TensorData> in = {{"x", randomTensor({rows, cols}, 1)},
                                            {"z", randomTensor({rows, cols}, 2)}};
    double copy = 0, t0 = timeAgainstCopy(m, in, copy);
    addRow({"broadcast chain (3 ops) 16M f32", "GB/s", 3.0 * rows * cols * 4 / t0 / 1e9, copy,
            "copy (timed alongside)", "target >= 80%"});
  }
}

void softmaxRows() {
  for (int64_t len : {128, 1024}) {
    int64_t rows = (16 << 20) / len;
    Graph g;
    ValueId x = g.addInput("x", f32({rows, len}));
    g.addOutput(g.node(g.addNode("Softmax", {x}, {{"y", f32({rows, len})}})).outputs[0]);
    rowOpRow("softmax rows", std::move(g), rows, len);
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
    rowOpRow("LayerNorm rows", std::move(g), rows, len);
  }
}

void fmaPeak() {
  gPeak = machinePeaks(gThreads).fmaGflops;  // the profiler's measurement, one per process
  addRow({"FMA peak f32 (measured, " + std::to_string(gThreads) + " threads)", "GFLOP/s", gPeak, 0,
          "", gPeak > 0 ? "independent vector FMAs at the widest width" : "no FMA unit found"});
}

void matmul(int64_t m, int64_t k, int64_t n) {
  std::string shape = std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n);
  TensorData x = randomTensor({m, k}, 1), w = randomTensor({k, n}, 2), bias = randomTensor({n}, 3);
  std::vector<float> c(size_t(m * n));
  // Each run is milliseconds, and OpenBLAS's figure moved by 1.7x between quick runs
  // of 3: the medians need more.
  int runs = gQuick ? 7 : 15;
  const double flops = 2.0 * m * n * k;
  // -O3's larger fusion window holds MatMul + the 10-op epilogue in one group.
  const std::string o3 = pipelineTextForLevel(3);
  Session plain;
  const CompiledModule& mod =
      compileGraphIn(plain, matmulGraph(m, k, n, false, w, bias), "MatMul " + shape, o3);
  std::map<std::string, TensorData> in = {{"x", x}};
  // Rounds alternate the two (a median of `runs` each), and each keeps its
  // median round: on a shared host a slow spell then hits both sides alike.
  std::vector<double> tbs, tfs;
  for (int r = 0; r < 5; ++r) {
    tbs.push_back(medianSeconds([&] { sgemm(m, k, n, x, w, c.data()); }, runs));
    letBlasThreadsSleep();
    tfs.push_back(timeModule(mod, in, runs));
  }
  std::sort(tbs.begin(), tbs.end());
  std::sort(tfs.begin(), tfs.end());
  double tb = tbs[tbs.size() / 2], tf = tfs[tfs.size() / 2];
  double err = maxRelErr(mod, in, c);
  addRow({"OpenBLAS sgemm " + shape, "GFLOP/s", flops / tb / 1e9, 0, "", "timed alongside"});
  addRow({"FuseLens MatMul " + shape, "GFLOP/s", flops / tf / 1e9, flops / tb / 1e9, "sgemm",
          "target >= 90%; max rel err vs sgemm " + std::to_string(err) + ofPeak(flops / tf / 1e9)});

  // Fused MatMul+bias+GELU vs sgemm then a separate epilogue pass.
  Session fusedSession, epiSession;
  const CompiledModule& fused = compileGraphIn(fusedSession, matmulGraph(m, k, n, true, w, bias),
                                               "MatMul+bias+GELU " + shape, o3);
  double tfused = timeModule(fused, in, runs);
  const CompiledModule& epi = compileGraphIn(epiSession, epilogueGraph(m, n, bias),
                                             "bias+GELU " + shape, defaultPipelineText());
  std::map<std::string, TensorData> ein = {{"y", TensorData(DType::F32, {m, n})}}, eout;
  double tsep = medianSeconds(
      [&] {
        sgemm(m, k, n, x, w, ein["y"].data<float>());
        Status st = epi.runInto(ein, eout);
        (void)st;
      },
      runs);
  letBlasThreadsSleep();
  addRow({"MatMul+bias+GELU fused " + shape, "ms", tfused * 1e3, tsep * 1e3,
          "sgemm + epilogue pass",
          "ratio < 100% means fused is faster (" + std::to_string(fused.kernels().size()) +
              " kernel)"});
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
  Session s;
  if (Status st = s.open(std::move(g), "conv 3x3"); !st) {
    addRow({"conv 3x3", "n/a", 0, 0, "", "open failed: " + st.message()});
    return;
  }
  std::map<std::string, TensorData> in = {{"x", randomTensor({1, c, hw, hw}, 1)}};
  double flops = 2.0 * c * c * 9 * hw * hw;
  int runs = gQuick ? 30 : 90;  // ~1 ms each: 3 runs moved the rows by 40%
  double ref = 0;
  const std::pair<std::string, std::string> layouts[] = {{"NCHW direct", "fuse-ops"},
                                                         {"NCHW8c", "layout{block=8},fuse-ops"},
                                                         {"NCHW16c", "layout{block=16},fuse-ops"}};
  for (const auto& [layout, pipeline] : layouts) {
    const char* step = "pipeline";
    Status st = s.optimize(pipeline);
    if (st) {
      step = "compile";
      st = compileModule(s);
    }
    if (!st) {
      addRow({"conv 3x3 " + pipeline, "n/a", 0, 0, "",
              std::string(step) + " failed: " + st.message()});
      continue;
    }
    const CompiledModule& mod = *s.compiled();
    double gf = flops / timeModule(mod, in, runs) / 1e9;
    std::string perKernel;  // "k0 0.31 ms, k1 9.80 ms, ..." where the module can profile
    if (auto prof = mod.profileKernels(in, runs))
      for (size_t k = 0; k < prof->size(); ++k)
        perKernel += (k ? ", " : "; ") + mod.kernels()[k].name + " " +
                     std::to_string((*prof)[k] * 1e3).substr(0, 5) + " ms";
    bool plain = layout == "NCHW direct";
    addRow({"Conv3x3+bias+Relu 64ch 56x56 " + layout, "GFLOP/s", gf, ref,
            plain ? "" : "NCHW direct",
            std::to_string(mod.kernels().size()) + " kernels" + (plain ? "" : " incl. transforms") +
                ofPeak(gf) + perKernel});
    if (plain) ref = gf;
  }
}

}  // namespace fuselens::bench
