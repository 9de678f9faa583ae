// Op coverage of code generation beyond f32 arithmetic: comparisons and
// Not / And / Or / Xor producing bool tensors, and Where selecting by them,
// alone (one kernel per op) and fused by the default pipeline, each checked
// against the eager interpreter.
#include <QtTest>

#include "codegen/compiler.h"
#include "core/eager/interpreter.h"
#include "passes/pass_manager.h"
#include "test_util.h"
#include "eager_check.h"

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
    result = node("Where", {node("Greater", {x, y}, boolT(s)), node("Tanh", {x}, f32(s)), y}, f32(s));
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
  double err = check(g,
                     {{"x", quantized({3, 17}, 1)},
                      {"y", quantized({17}, 2)},
                      {"z", quantized({3, 1}, 3)}},
                     pipeline.toStdString(), &info);
  QVERIFY2(err <= 1e-5, info.c_str());
}

QTEST_APPLESS_MAIN(CodegenCoverageTest)
#include "codegen_coverage_test.moc"
