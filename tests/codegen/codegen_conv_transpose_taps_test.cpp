// ConvTranspose with kernel == stride takes the register-tiled nest
// (compute_conv_transpose_taps.cpp) under the default schedule: the loop IR
// holds the compile-time packed weight and the expanded input row, a fused
// BatchNormalization + Relu runs on the accumulators (no temp for the
// ConvTranspose result), and the output matches eager. The serial schedule and
// a kernel wider than the stride keep the general nest, and match too.
#include <QtTest>

#include "codegen/compiler.h"
#include "core/compare/compare.h"
#include "core/eager/interpreter.h"
#include "core/ops/registry.h"
#include "passes/pass_manager.h"
#include "test_util.h"

using namespace fuselens;
using namespace fuselens::testing;

namespace {

struct Case {
  const char* name;
  Shape x;
  int64_t cout, kernel, stride;
  bool bias, bnRelu;
};

ValueId constant(Graph& g, const std::string& name, const Shape& s, uint32_t seed, float lo = -1) {
  return g.addConstant(name, std::make_shared<const TensorData>(randomTensor(s, seed, lo, 1)));
}

Graph convTranspose(const Case& c) {
  Graph g;
  ValueId x = g.addInput("x", f32(c.x));
  std::vector<ValueId> ins = {x, constant(g, "w", {c.x[1], c.cout, c.kernel, c.kernel}, 21)};
  if (c.bias) ins.push_back(constant(g, "b", {c.cout}, 22));
  Attributes a;
  a.set("strides", Shape{c.stride, c.stride});
  ValueId y = g.node(g.addNode("ConvTranspose", ins, {{"t", f32({})}}, a, "up")).outputs[0];
  if (c.bnRelu) {
    std::vector<ValueId> bn = {y, constant(g, "s", {c.cout}, 23), constant(g, "sb", {c.cout}, 24),
                               constant(g, "m", {c.cout}, 25),
                               constant(g, "v", {c.cout}, 26, 0.5f)};
    y = g.node(g.addNode("BatchNormalization", bn, {{"n", f32({})}}, {}, "bn")).outputs[0];
    y = g.node(g.addNode("Relu", {y}, {{"y", f32({})}}, {}, "relu")).outputs[0];
  }
  g.addOutput(y);
  if (Status s = inferGraphTypes(g); !s.isOk()) qWarning("infer: %s", s.message().c_str());
  g.markAsOriginal();
  return g;
}

// Compiles g (default pipeline) under `s`; the loop IR, or "error: ..." when
// it fails to compile or its output differs from eager.
std::string compileAndCheck(const Graph& g, const Schedule& s, const Shape& x) {
  std::map<std::string, TensorData> in = {{"x", randomTensor(x, 5)}};
  auto eager = runEager(g, in);
  if (!eager) return "error: eager: " + eager.message();
  auto specs = parsePipeline(defaultPipeline());
  auto r = runPipeline(g, *specs);
  if (!r) return "error: pipeline: " + r.message();
  const Graph& opt = r->snapshots.back().graph();
  CompileOptions co;
  co.schedule = s;
  co.tuningLog = "";
  auto m = compileGraph(opt, co);
  if (!m) return "error: compile: " + m.message();
  auto run = (*m)->run(in);
  if (!run) return "error: run: " + run.message();
  ValueId out = opt.outputs()[0];
  const Value& v = opt.value(out);
  const TensorData* want = eager->find(v.origin);
  if (!want || !(*run)[out.index]) return "error: no output to compare";
  TensorMetrics tm =
      compareTensors(*want, g.value(v.origin).layout, *(*run)[out.index], v.layout, {1e-4, 1e-4});
  if (!tm.withinTolerance()) return "error: max abs " + std::to_string(tm.maxAbs);
  return (*m)->loopIrText();
}

bool tiled(const std::string& ir) {
  return ir.find("packed_w") != std::string::npos && ir.find("float xe") != std::string::npos;
}

}  // namespace

class CodegenConvTransposeTapsTest : public QObject {
  Q_OBJECT

 private slots:
  void kernelEqualsStrideIsTiled_data() {
    QTest::addColumn<int>("index");
    for (int i = 0; i < int(cases().size()); ++i) QTest::newRow(cases()[i].name) << i;
  }
  void kernelEqualsStrideIsTiled() {
    QFETCH(int, index);
    const Case& c = cases()[index];
    Graph g = convTranspose(c);
    std::string ir = compileAndCheck(g, Schedule::defaults(), c.x);
    QVERIFY2(ir.rfind("error", 0) != 0, ir.c_str());
    QVERIFY2(tiled(ir), ir.c_str());
    // The epilogue runs on the accumulators: no temp holds the ConvTranspose result.
    QVERIFY2(ir.find("alloc(") == std::string::npos, ir.c_str());
    std::string plain = compileAndCheck(g, Schedule::serial(), c.x);
    QVERIFY2(plain.rfind("error", 0) != 0, plain.c_str());
    QVERIFY2(!tiled(plain), plain.c_str());
  }

  void overlappingKernelKeepsGeneralNest() {
    Case c = {"kernel 3, stride 2", {1, 4, 3, 5}, 6, 3, 2, true, true};
    std::string ir = compileAndCheck(convTranspose(c), Schedule::defaults(), c.x);
    QVERIFY2(ir.rfind("error", 0) != 0, ir.c_str());
    QVERIFY2(!tiled(ir), ir.c_str());
  }

 private:
  static const std::vector<Case>& cases() {
    static const std::vector<Case> c = {
        {"stride 2, 24 channels, BN + Relu (the PP-OCR det head)",
         {1, 24, 3, 10},
         24,
         2,
         2,
         false,
         true},
        {"stride 2, 11 channels, bias, row of 2.3 tiles", {1, 5, 2, 37}, 11, 2, 2, true, false},
        {"stride 2, 1 channel", {1, 6, 4, 40}, 1, 2, 2, false, false},
        {"stride 4, 20 channels, bias, batch 2", {2, 3, 2, 5}, 20, 4, 4, true, false},
        {"stride 4, 7 channels, BN + Relu", {1, 6, 3, 9}, 7, 4, 4, true, true},
        {"stride 2, 1024 input channels (a narrower tile)", {1, 1024, 1, 20}, 3, 2, 2, true, false},
    };
    return c;
  }
};

QTEST_APPLESS_MAIN(CodegenConvTransposeTapsTest)
#include "codegen_conv_transpose_taps_test.moc"
