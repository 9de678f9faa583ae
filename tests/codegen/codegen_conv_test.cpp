// Conv (1-D / 2-D / 3-D, groups incl. depthwise, strides, pads, dilations,
// auto_pad, bias), MaxPool / AveragePool (pads, strides, count_include_pad,
// ceil_mode) and the global pools, compiled and checked against the eager
// interpreter; Conv with an elementwise epilogue goes through the default
// pipeline and must become one kernel.
#include <QtTest>

#include "codegen/compiler.h"
#include "core/eager/interpreter.h"
#include "core/ops/registry.h"
#include "passes/pass_manager.h"
#include "test_util.h"

using namespace fuselens;
using namespace fuselens::testing;

namespace {

struct Case {
  std::string op = "Conv";
  Shape x;
  Shape k;  // Conv: the weight shape [M, C/group, k...]; pools: kernel_shape
  int64_t group = 1;
  Shape strides, pads, dilations;
  std::string autoPad;
  bool bias = false;
  std::string epilogue;  // "", "Relu", "Clip", "AddRelu", "Residual"
  bool includePad = false;
  bool ceil = false;
};

}  // namespace

Q_DECLARE_METATYPE(Case)

namespace {

double maxAbs(const TensorData& a, const TensorData& b) {
  if (a.shape != b.shape) return INFINITY;
  double w = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    double d = std::fabs(a.at(i) - b.at(i));
    if (!(d <= w)) w = std::isnan(d) ? INFINITY : d;
  }
  return w;
}

std::shared_ptr<const TensorData> constant(const Shape& s, uint32_t seed) {
  return std::make_shared<const TensorData>(randomTensor(s, seed));
}

Graph buildGraph(const Case& c) {
  Graph g;
  ValueId x = g.addInput("x", f32(c.x));
  std::vector<ValueId> ins = {x};
  Attributes a;
  if (c.op == "Conv") {
    ins.push_back(g.addConstant("w", constant(c.k, 11)));
    if (c.bias) ins.push_back(g.addConstant("b", constant({c.k[0]}, 12)));
    a.set("group", c.group);
  } else if (c.op == "MaxPool" || c.op == "AveragePool") {
    a.set("kernel_shape", c.k);
    if (c.op == "AveragePool") a.set("count_include_pad", int64_t(c.includePad));
    if (c.ceil) a.set("ceil_mode", int64_t(1));
  }
  if (!c.strides.empty()) a.set("strides", c.strides);
  if (!c.pads.empty()) a.set("pads", c.pads);
  if (!c.dilations.empty()) a.set("dilations", c.dilations);
  if (!c.autoPad.empty()) a.set("auto_pad", c.autoPad);
  ValueId y = g.node(g.addNode(c.op, ins, {{"y", f32({})}}, a, "op")).outputs[0];
  int id = 0;
  auto node = [&](const char* op, std::vector<ValueId> in) {
    std::string name = std::string(op) + std::to_string(id++);
    return g.node(g.addNode(op, in, {{name, f32({})}}, {}, name)).outputs[0];
  };
  int64_t m = c.op == "Conv" ? c.k[0] : c.x[1];
  Shape perChannel(c.x.size(), 1);
  perChannel[1] = m;
  if (c.epilogue == "Relu") y = node("Relu", {y});
  if (c.epilogue == "Clip")
    y = node("Clip", {y,
                      g.addConstant("lo", std::make_shared<const TensorData>(TensorData::fromVector(
                                              DType::F32, {}, std::vector<float>{0.0f}))),
                      g.addConstant("hi", std::make_shared<const TensorData>(TensorData::fromVector(
                                              DType::F32, {}, std::vector<float>{0.5f})))});
  if (c.epilogue == "AddRelu")
    y = node("Relu", {node("Add", {y, g.addConstant("shift", constant(perChannel, 13))})});
  g.addOutput(y);
  if (c.epilogue == "Residual") {
    // y + x (the conv keeps the shape), then Relu: a second graph input in the epilogue.
    g.setOutputs({});
    g.addOutput(node("Relu", {node("Add", {y, x})}));
  }
  if (Status s = inferGraphTypes(g); !s.isOk()) qWarning("infer: %s", s.message().c_str());
  g.markAsOriginal();
  return g;
}

}  // namespace

class CodegenConvTest : public QObject {
  Q_OBJECT

 private slots:
  void window_data();
  void window();
  void shapeMismatchIsAnError();
  void defaultScheduleIsParallelAndVectorized();
  void smallCnn();
};

void CodegenConvTest::window_data() {
  QTest::addColumn<Case>("c");
  auto conv = [](Shape x, Shape w) {
    Case c;
    c.x = x;
    c.k = w;
    return c;
  };
  QTest::newRow("conv 2-D plain") << conv({1, 3, 8, 9}, {4, 3, 3, 3});
  {
    Case c = conv({2, 3, 7, 7}, {5, 3, 3, 3});
    c.pads = {1, 1, 1, 1};
    c.bias = true;
    QTest::newRow("conv pads + bias, batch 2") << c;
  }
  {
    Case c = conv({1, 4, 11, 10}, {6, 4, 3, 2});
    c.strides = {2, 3};
    c.dilations = {2, 1};
    c.pads = {2, 0, 1, 1};
    QTest::newRow("conv strides, dilations, asym pads") << c;
  }
  {
    Case c = conv({1, 6, 9, 9}, {4, 3, 3, 3});
    c.group = 2;
    c.pads = {1, 1, 1, 1};
    c.bias = true;
    QTest::newRow("conv groups") << c;
  }
  {
    Case c = conv({1, 8, 10, 10}, {8, 1, 3, 3});
    c.group = 8;
    c.pads = {1, 1, 1, 1};
    c.strides = {2, 2};
    c.bias = true;
    QTest::newRow("conv depthwise stride 2") << c;
  }
  {
    Case c = conv({2, 3, 20}, {4, 3, 5});
    c.pads = {2, 1};
    c.strides = {2};
    QTest::newRow("conv 1-D") << c;
  }
  {
    Case c = conv({1, 2, 5, 6, 7}, {3, 2, 2, 3, 3});
    c.pads = {1, 0, 1, 0, 1, 1};
    QTest::newRow("conv 3-D") << c;
  }
  {
    Case c = conv({1, 2, 7, 8}, {3, 2, 3, 4});
    c.strides = {2, 2};
    c.autoPad = "SAME_UPPER";
    QTest::newRow("conv SAME_UPPER") << c;
    c.autoPad = "SAME_LOWER";
    QTest::newRow("conv SAME_LOWER") << c;
    c.autoPad = "VALID";
    QTest::newRow("conv VALID") << c;
  }
  {
    Case c = conv({1, 2, 4, 80}, {3, 2, 1, 3});
    c.pads = {0, 1, 0, 1};
    QTest::newRow("conv wide row: W tiles + tail") << c;
  }
  // Rows shorter than a vector with at least half a vector of output channels:
  // vectorized over output channels (compute_conv_channels.cpp); blocks of a
  // tile, a leftover block and a narrower last block (56 = 2x16 + 16 + 8 on
  // AVX-512), outer spatial dims, padding, dilation, batch 2.
  {
    Case c = conv({2, 1, 70}, {56, 1, 16});
    c.strides = {8};
    c.bias = true;
    QTest::newRow("channel vectors: STFT-like 1-D, stride 8") << c;
  }
  {
    Case c = conv({1, 8, 6, 3}, {20, 8, 3, 2});
    c.pads = {1, 0, 1, 1};
    c.dilations = {1, 2};
    QTest::newRow("channel vectors: 2-D short rows, pads, dilated W") << c;
  }
  {
    Case c = conv({2, 3, 4, 5, 6}, {17, 3, 2, 3, 3});
    c.pads = {1, 0, 1, 0, 1, 1};
    c.bias = true;
    QTest::newRow("channel vectors: 3-D, 17 channels") << c;
  }
  {
    Case c = conv({2, 20, 9}, {24, 20, 3});
    c.pads = {1, 1};
    c.strides = {2};
    c.bias = true;
    c.epilogue = "Relu";
    QTest::newRow("channel vectors: 1-D + bias + Relu fused, batch 2") << c;
  }
  // Epilogues through the default pipeline (one fused kernel).
  {
    Case c = conv({1, 3, 8, 8}, {4, 3, 3, 3});
    c.pads = {1, 1, 1, 1};
    c.bias = true;
    c.epilogue = "Relu";
    QTest::newRow("conv + bias + Relu") << c;
    c.epilogue = "Clip";
    QTest::newRow("conv + Clip") << c;
    c.epilogue = "AddRelu";
    QTest::newRow("conv + Add + Relu") << c;
  }
  {
    Case c = conv({1, 4, 6, 6}, {4, 1, 3, 3});
    c.group = 4;
    c.pads = {1, 1, 1, 1};
    c.epilogue = "Residual";
    QTest::newRow("depthwise + residual Add + Relu") << c;
  }
  auto pool = [](const char* op, Shape x, Shape k) {
    Case c;
    c.op = op;
    c.x = x;
    c.k = k;
    return c;
  };
  QTest::newRow("maxpool 2x2 s2") << [&] {
    Case c = pool("MaxPool", {1, 3, 8, 8}, {2, 2});
    c.strides = {2, 2};
    return c;
  }();
  QTest::newRow("maxpool 3x3 pads, dilated") << [&] {
    Case c = pool("MaxPool", {2, 2, 9, 9}, {3, 3});
    c.pads = {1, 1, 1, 1};
    c.dilations = {2, 1};
    return c;
  }();
  QTest::newRow("maxpool SAME_UPPER + Relu") << [&] {
    Case c = pool("MaxPool", {1, 2, 7, 7}, {3, 3});
    c.strides = {2, 2};
    c.autoPad = "SAME_UPPER";
    c.epilogue = "Relu";
    return c;
  }();
  for (bool include : {false, true}) {
    Case c = pool("AveragePool", {1, 3, 7, 8}, {3, 3});
    c.pads = {1, 1, 1, 1};
    c.strides = {2, 2};
    c.includePad = include;
    QTest::newRow(include ? "avgpool include pad" : "avgpool exclude pad") << c;
    c.ceil = true;
    c.pads = {0, 1, 0, 0};
    QTest::newRow(include ? "avgpool ceil include pad" : "avgpool ceil exclude pad") << c;
  }
  QTest::newRow("avgpool 1-D no pad") << [&] {
    Case c = pool("AveragePool", {2, 3, 12}, {4});
    c.strides = {2};
    return c;
  }();
  QTest::newRow("global avg") << pool("GlobalAveragePool", {2, 5, 7, 9}, {});
  QTest::newRow("global max") << pool("GlobalMaxPool", {1, 4, 3, 50}, {});
  QTest::newRow("global avg 1-D") << pool("GlobalAveragePool", {2, 3, 10}, {});
}

void CodegenConvTest::window() {
  QFETCH(Case, c);
  Graph g = buildGraph(c);
  std::map<std::string, TensorData> in = {{"x", randomTensor(c.x, 3)}};
  auto eager = runEager(g, in);
  QVERIFY2(eager.isOk(), eager.message().c_str());
  Graph opt = g;
  if (!c.epilogue.empty()) {
    auto r = runPipeline(g, *parsePipeline(defaultPipeline()));
    QVERIFY2(r.isOk(), r.message().c_str());
    opt = r->snapshots.back().graph();
  }
  auto m = compileGraph(opt, {});
  QVERIFY2(m.isOk(), m.message().c_str());
  if (!c.epilogue.empty()) QCOMPARE(int((*m)->kernels().size()), 1);  // the epilogue fused
  auto run = (*m)->run(in);
  QVERIFY2(run.isOk(), run.message().c_str());
  const TensorData* want = eager->find(g.outputs()[0]);
  const auto& got = (*run)[opt.outputs()[0].index];
  QVERIFY(want && got);
  double err = maxAbs(*got, *want);
  QVERIFY2(err <= 1e-4, (std::to_string(err) + "\n" + (*m)->loopIrText()).c_str());
}

void CodegenConvTest::shapeMismatchIsAnError() {
  // A declared output shape that disagrees with the window geometry names the node.
  Graph g;
  ValueId x = g.addInput("x", f32({1, 2, 6, 6}));
  Attributes a;
  a.set("kernel_shape", Shape{3, 3});
  g.addOutput(g.node(g.addNode("MaxPool", {x}, {{"y", f32({1, 2, 5, 5})}}, a, "mp")).outputs[0]);
  g.markAsOriginal();
  CompileOptions strict;
  strict.fallback = false;  // else the eager kernel would stand in (and refuse at run time)
  auto m = compileGraph(g, strict);
  QVERIFY(!m.isOk());
  QVERIFY2(m.message().find("'mp'") != std::string::npos, m.message().c_str());
}

void CodegenConvTest::defaultScheduleIsParallelAndVectorized() {
  Case c;
  c.x = {2, 8, 16, 16};
  c.k = {16, 8, 3, 3};
  c.pads = {1, 1, 1, 1};
  c.bias = true;
  c.epilogue = "Relu";
  Graph g = buildGraph(c);
  // The NCHW direct conv (no layout pass; -O2 and -O3 block it to NCHW8c).
  auto r = runPipeline(
      g, *parsePipeline("const-fold,cse,simplify,dce,fuse-patterns,fuse-ops{max-ops=8}"));
  QVERIFY2(r.isOk(), r.message().c_str());
  auto m = compileGraph(r->snapshots.back().graph(), {});
  QVERIFY2(m.isOk(), m.message().c_str());
  std::string text = (*m)->loopIrText();
  // The N * C_out loop runs on the pool; the W tile loops are vector loops.
  QVERIFY2(text.find("i0 < 32; ++i0) {  // parallel") != std::string::npos, text.c_str());
  QVERIFY2(text.find("// vectorized") != std::string::npos, text.c_str());
}

void CodegenConvTest::smallCnn() {
  // Conv+bias+Relu -> MaxPool -> depthwise Conv+Clip -> AveragePool -> Conv ->
  // GlobalAveragePool -> Flatten -> Gemm, through the default pipeline.
  Graph g;
  ValueId v = g.addInput("x", f32({2, 3, 16, 16}));
  int id = 0;
  auto node = [&](const char* op, std::vector<ValueId> in, Attributes a = {}) {
    std::string name = std::string(op) + std::to_string(id++);
    return g.node(g.addNode(op, in, {{name, f32({})}}, a, name)).outputs[0];
  };
  auto c = [&](Shape s) {
    int k = id++;  // one name and one seed per constant, in a defined order
    return g.addConstant("c" + std::to_string(k), constant(s, 20 + k + 1));
  };
  Attributes pad1;
  pad1.set("pads", Shape{1, 1, 1, 1});
  v = node("Relu", {node("Conv", {v, c({8, 3, 3, 3}), c({8})}, pad1)});
  Attributes mp;
  mp.set("kernel_shape", Shape{2, 2});
  mp.set("strides", Shape{2, 2});
  v = node("MaxPool", {v}, mp);
  Attributes dw = pad1;
  dw.set("group", int64_t(8));
  auto scalar = [&](float f) {
    return g.addConstant("s" + std::to_string(id++),
                         std::make_shared<const TensorData>(
                             TensorData::fromVector(DType::F32, {}, std::vector<float>{f})));
  };
  v = node("Clip", {node("Conv", {v, c({8, 1, 3, 3}), c({8})}, dw), scalar(0), scalar(6)});
  Attributes ap;
  ap.set("kernel_shape", Shape{3, 3});
  ap.set("pads", Shape{1, 1, 1, 1});
  v = node("AveragePool", {v}, ap);
  v = node("Conv", {v, c({16, 8, 1, 1})});
  v = node("Flatten", {node("GlobalAveragePool", {v})});
  Attributes tb;
  tb.set("transB", int64_t(1));
  g.addOutput(node("Gemm", {v, c({10, 16}), c({10})}, tb));
  QVERIFY(inferGraphTypes(g).isOk());
  g.markAsOriginal();
  std::map<std::string, TensorData> in = {{"x", randomTensor({2, 3, 16, 16}, 5)}};
  auto eager = runEager(g, in);
  QVERIFY2(eager.isOk(), eager.message().c_str());
  auto r = runPipeline(g, *parsePipeline(defaultPipeline()));
  QVERIFY2(r.isOk(), r.message().c_str());
  const Graph& opt = r->snapshots.back().graph();
  auto m = compileGraph(opt, {});
  QVERIFY2(m.isOk(), m.message().c_str());
  auto run = (*m)->run(in);
  QVERIFY2(run.isOk(), run.message().c_str());
  const auto& got = (*run)[opt.outputs()[0].index];
  QVERIFY(got);
  double err = maxAbs(*got, *eager->find(g.outputs()[0]));
  QVERIFY2(err <= 1e-4, (std::to_string(err) + "\n" + (*m)->loopIrText()).c_str());
}

QTEST_APPLESS_MAIN(CodegenConvTest)
#include "codegen_conv_test.moc"
