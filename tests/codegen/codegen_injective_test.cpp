// Injective data movement in the loop IR: Slice (steps, negative starts),
// Concat (two and three inputs, inner and outer axis) and constant Pad
// (positive and negative pads), alone and fused with elementwise neighbours,
// checked against the eager interpreter; an unsupported Pad mode is an error.
#include <QtTest>

#include "codegen/compiler.h"
#include "core/eager/interpreter.h"
#include "eager_check.h"
#include "passes/pass_manager.h"
#include "test_util.h"

using namespace fuselens;
using namespace fuselens::testing;

namespace {

ValueId ints(Graph& g, const std::string& name, std::vector<int64_t> v) {
  int64_t n = int64_t(v.size());
  return g.addConstant(
      name, std::make_shared<const TensorData>(TensorData::fromVector(DType::I64, {n}, v)));
}

double check(const Graph& g, const std::map<std::string, TensorData>& in,
             const std::string& pipeline, std::string* info) {
  return fuselens::test::compiledVsEager(g, in, pipeline, info);
}

}  // namespace

class CodegenInjectiveTest : public QObject {
  Q_OBJECT

 private slots:
  void sliceConcatPadFused_data();
  void sliceConcatPadFused();
  void unknownPadModeIsAnError();
};

void CodegenInjectiveTest::sliceConcatPadFused_data() {
  QTest::addColumn<QString>("pipeline");
  QTest::newRow("one kernel per op") << QString();
  QTest::newRow("default pipeline") << QString::fromStdString(defaultPipeline());
}

// y1 = Concat(Slice(x)[::2 rows, -5: cols], tanh(z), axis 1); y2 = Pad(relu(y1));
// y3 = Concat(x, x, x, axis 0) with a pad that crops (negative).
void CodegenInjectiveTest::sliceConcatPadFused() {
  QFETCH(QString, pipeline);
  Graph g;
  ValueId x = g.addInput("x", f32({8, 12})), z = g.addInput("z", f32({4, 3}));
  auto node = [&](const char* op, std::vector<ValueId> in, Shape out, Attributes a = {}) {
    return g
        .node(g.addNode(op, in, {{std::string(op) + std::to_string(g.nodeIds().size()), f32(out)}},
                        a))
        .outputs[0];
  };
  ValueId sl = node("Slice",
                    {x, ints(g, "st", {0, -5}), ints(g, "en", {8, 12}), ints(g, "ax", {0, 1}),
                     ints(g, "sp", {2, 1})},
                    {4, 5});
  Attributes a1;
  a1.set("axis", int64_t(1));
  ValueId c = node("Concat", {sl, node("Tanh", {z}, {4, 3})}, {4, 8}, a1);
  g.addOutput(c);
  ValueId r = node("Relu", {c}, {4, 8});
  g.addOutput(node("Pad", {r, ints(g, "pads", {1, 0, 2, 3})}, {7, 11}));
  Attributes a0;
  a0.set("axis", int64_t(0));
  ValueId c3 = node("Concat", {x, x, x}, {24, 12}, a0);
  g.addOutput(node("Pad", {c3, ints(g, "crop", {-1, 2, 0, -3})}, {23, 11}));
  g.markAsOriginal();
  std::string info;
  double err = check(g, {{"x", randomTensor({8, 12}, 1)}, {"z", randomTensor({4, 3}, 2)}},
                     pipeline.toStdString(), &info);
  QVERIFY2(err <= 1e-6, info.c_str());
}

// Edge, reflect and wrap lower (codegen_data_test); a mode ONNX lacks is refused.
void CodegenInjectiveTest::unknownPadModeIsAnError() {
  Graph g;
  ValueId x = g.addInput("x", f32({4}));
  Attributes a;
  a.set("mode", std::string("mirror"));
  g.addOutput(
      g.node(g.addNode("Pad", {x, ints(g, "p", {1, 1})}, {{"y", f32({6})}}, a, "pad")).outputs[0]);
  CompileOptions opts;
  opts.fallback = false;
  auto m = compileGraph(g, opts);
  QVERIFY(!m.isOk());
  QCOMPARE(m.message(), std::string("node 'pad' (Pad): Pad mode 'mirror' has no code generation"));
}

QTEST_APPLESS_MAIN(CodegenInjectiveTest)
#include "codegen_injective_test.moc"
