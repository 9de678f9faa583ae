// Op coverage of code generation beyond f32 arithmetic: comparisons and
// Not / And / Or / Xor producing bool tensors, and Where selecting by them,
// alone (one kernel per op) and fused by the default pipeline, each checked
// against the eager interpreter.
#include <QtTest>

#include "codegen/compiler.h"
#include "codegen/export/export.h"
#include "core/eager/interpreter.h"
#include "core/io/npy.h"
#include "core/onnx/import.h"
#include "core/ops/registry.h"
#include "eager_check.h"
#include "passes/pass_manager.h"
#include "test_util.h"
#include "tests/support/test_paths.h"

using namespace fuselens;
using namespace fuselens::testing;

namespace {

TensorType boolT(const Shape& s) { return TensorType::of(DType::Bool, s); }

double check(const Graph& g, const std::map<std::string, TensorData>& in,
             const std::string& pipeline, std::string* info) {
  return fuselens::test::compiledVsEager(g, in, pipeline, info);
}

}  // namespace

class CodegenCoverageTest : public QObject {
  Q_OBJECT

 private slots:
  void compareLogicWhere_data();
  void compareLogicWhere();
  void mathAndActivations_data();
  void mathAndActivations();
  void fallbackIsLabelled();
  void executionTableNamesRegisteredOps();
};

void CodegenCoverageTest::compareLogicWhere_data() {
  QTest::addColumn<QString>("op");
  QTest::addColumn<QString>("pipeline");
  const char* ops[] = {"Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual",
                       "Not",   "And",  "Or",          "Xor",     "Where"};
  for (const char* op : ops) {
    QTest::newRow((std::string(op) + " alone").c_str()) << QString(op) << QString();
    QTest::newRow((std::string(op) + " fused").c_str())
        << QString(op) << QString::fromStdString(defaultPipeline());
  }
}

// x [3, 17], y [17] (broadcast), z [3, 1]; values quantized to tenths so that
// Equal and the boundary of LessOrEqual / GreaterOrEqual are exercised.
// Comparisons: op(relu(x), y). Logic: op(x > y, x < z). Where: where(x > y, tanh(x), y).
void CodegenCoverageTest::compareLogicWhere() {
  QFETCH(QString, op);
  QFETCH(QString, pipeline);
  std::string o = op.toStdString();
  Graph g;
  ValueId x = g.addInput("x", f32({3, 17})), y = g.addInput("y", f32({17})),
          z = g.addInput("z", f32({3, 1}));
  int k = 0;
  auto node = [&](const std::string& name, std::vector<ValueId> in, TensorType out) {
    return g.node(g.addNode(name, in, {{name + std::to_string(k++), out}})).outputs[0];
  };
  Shape s = {3, 17};
  ValueId result;
  if (o == "Where") {
    result =
        node("Where", {node("Greater", {x, y}, boolT(s)), node("Tanh", {x}, f32(s)), y}, f32(s));
  } else if (o == "Not" || o == "And" || o == "Or" || o == "Xor") {
    ValueId a = node("Greater", {x, y}, boolT(s)), b = node("Less", {x, z}, boolT(s));
    result = o == "Not" ? node(o, {a}, boolT(s)) : node(o, {a, b}, boolT(s));
  } else {
    result = node(o, {node("Relu", {x}, f32(s)), y}, boolT(s));
  }
  g.addOutput(result);
  g.markAsOriginal();
  auto quantized = [](const Shape& sh, uint32_t seed) {
    TensorData t = randomTensor(sh, seed);
    std::vector<float> v = values(t);
    for (float& f : v) f = std::round(f * 5) / 5;
    return TensorData::fromVector(DType::F32, sh, v);
  };
  std::string info;
  double err = check(
      g, {{"x", quantized({3, 17}, 1)}, {"y", quantized({17}, 2)}, {"z", quantized({3, 1}, 3)}},
      pipeline.toStdString(), &info);
  QVERIFY2(err <= 1e-5, info.c_str());
}

void CodegenCoverageTest::mathAndActivations_data() {
  QTest::addColumn<QString>("op");
  QTest::addColumn<QString>("pipeline");
  const char* ops[] = {"Log",         "Sin",       "Cos",       "Tan",   "Atan",
                       "Floor",       "Ceil",      "Round",     "Sign",  "Softplus",
                       "Softsign",    "Selu",      "Elu",       "Celu",  "ThresholdedRelu",
                       "HardSigmoid", "HardSwish", "Mish",      "IsNaN", "IsInf",
                       "Mod",         "Pow",       "Reciprocal"};
  for (const char* op : ops) {
    QTest::newRow((std::string(op) + " alone").c_str()) << QString(op) << QString();
    QTest::newRow((std::string(op) + " fused").c_str())
        << QString(op) << QString::fromStdString(defaultPipeline());
  }
}

// y = op(x * 4) (Log: of |x| * 4; Mod and Pow: with a tensor y as the second
// operand), x [5, 37] in [-1, 1] with exact halves for Round; then Relu-free
// so the op is the last one: the fused row puts Mul and op in one kernel.
void CodegenCoverageTest::mathAndActivations() {
  QFETCH(QString, op);
  QFETCH(QString, pipeline);
  std::string o = op.toStdString();
  Shape s = {5, 37};
  Graph g;
  ValueId x = g.addInput("x", f32(s)), y = g.addInput("y", f32({37}));
  auto four =
      std::make_shared<TensorData>(TensorData::fromVector(DType::F32, {}, std::vector<float>{4}));
  ValueId k = g.addConstant("four", four);
  int n = 0;
  auto node = [&](const std::string& name, std::vector<ValueId> in, TensorType out) {
    return g.node(g.addNode(name, in, {{name + std::to_string(n++), out}})).outputs[0];
  };
  ValueId in = node("Mul", {x, k}, f32(s));
  if (o == "Log") in = node("Abs", {in}, f32(s));
  bool boolOut = o == "IsNaN" || o == "IsInf";
  std::vector<ValueId> args = {in};
  if (o == "Mod" || o == "Pow") args.push_back(y);
  if (o == "Pow") args[0] = node("Abs", {in}, f32(s));
  NodeId id = g.addNode(o, args, {{"out", TensorType::of(boolOut ? DType::Bool : DType::F32, s)}});
  if (o == "Mod") g.mutableNode(id).attrs.set("fmod", Attribute(int64_t(1)));
  g.addOutput(g.node(id).outputs[0]);
  g.markAsOriginal();
  TensorData xv = randomTensor(s, 5);
  std::vector<float> v = values(xv);
  for (size_t i = 0; i < v.size(); i += 7) v[i] = std::round(v[i] * 8) / 8;  // x*4 lands on halves
  for (float& f : v)
    if (f == 0) f = 0.375f;  // log(0) and 1/0 are infinities: equal, but not a difference of 0
  if (boolOut) v[1] = NAN, v[2] = INFINITY, v[3] = -INFINITY;
  TensorData yv = randomTensor({37}, 6, 0.5f, 2.0f);
  std::string info;
  double err = check(g, {{"x", TensorData::fromVector(DType::F32, s, v)}, {"y", yv}},
                     pipeline.toStdString(), &info);
  QVERIFY2(err <= 1e-5, info.c_str());
}

// A node without code generation runs as the labelled reference fallback;
// with CompileOptions::fallback off it is a compile error naming the node.
// (If compiles as a driver kernel; with drivers off it has no code generation.)
void CodegenCoverageTest::fallbackIsLabelled() {
  std::string dir = fuselens::test::sourcePath() + "/tests/fixtures/cf_if_else/";
  auto model = importOnnxFile(dir + "model.onnx");
  QVERIFY2(model.isOk(), model.message().c_str());
  const Graph& g = model->graph;
  auto x = readNpy(dir + "input_x.npy");
  QVERIFY2(x.isOk(), x.message().c_str());
  CompileOptions strict;
  strict.fallback = false;
  strict.drivers = false;
  auto bad = compileGraph(g, strict);
  QVERIFY(!bad.isOk());
  QVERIFY2(bad.message().find("(If)") != std::string::npos, bad.message().c_str());
  CompileOptions loose;
  loose.drivers = false;
  auto m = compileGraph(g, loose);
  QVERIFY2(m.isOk(), m.message().c_str());
  int fallbacks = 0;
  for (const KernelInfo& k : (*m)->kernels()) {
    QCOMPARE(k.fallback, g.node(k.node).op == "If");
    fallbacks += k.fallback;
    if (k.fallback) QVERIFY(!k.fallbackReason.empty());
  }
  QCOMPARE(fallbacks, 1);
  QVERIFY((*m)->loopIrText().find(kFallbackLabel) != std::string::npos);
  // The fallback kernel computes what eager does, and the compiled kernels around it still run.
  auto eager = runEager(g, {{"x", *x}});
  QVERIFY2(eager.isOk(), eager.message().c_str());
  auto run = (*m)->run({{"x", *x}});
  QVERIFY2(run.isOk(), run.message().c_str());
  ValueId y = g.outputs()[0];
  QVERIFY((*run)[y.index].has_value());
  QCOMPARE((*run)[y.index]->bytes, eager->find(y)->bytes);
  // A library cannot carry the eager interpreter: export refuses, naming the node.
  ExportOptions eo;
  eo.outDir = QDir::tempPath().toStdString() + "/fuselens_fallback_export";
  eo.cc.clear();
  auto exported = exportModel(g, eo);
  QVERIFY(!exported.isOk());
  QVERIFY2(exported.message().find("'If_0' (If)") != std::string::npos, exported.message().c_str());
}

QTEST_APPLESS_MAIN(CodegenCoverageTest)
// The op registry's execution table (views, compute classes) names only
// registered ops, and a view is aliased while Dropout (its mask) is a kernel.
void CodegenCoverageTest::executionTableNamesRegisteredOps() {
  std::string missing;
  for (const std::string& op : unregisteredExecOps()) missing += op + " ";
  QVERIFY2(missing.empty(), ("not registered: " + missing).c_str());
  Graph g;
  ValueId x = g.addInput("x", TensorType::of(DType::F32, {2, 3}));
  NodeId id = g.addNode("Identity", {x}, {{"i", TensorType::of(DType::F32, {2, 3})}});
  NodeId drop = g.addNode("Dropout", {x}, {{"d", TensorType::of(DType::F32, {2, 3})}});
  QVERIFY(!needsKernel(g, g.node(id)));
  QVERIFY(needsKernel(g, g.node(drop)));
  QCOMPARE(int(OpRegistry::instance().find("", "Dropout")->compute),
           int(ComputeClass::Elementwise));
}

#include "codegen_coverage_test.moc"
