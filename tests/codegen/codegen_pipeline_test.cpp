// Codegen against the rest of the stack: a model graph goes through the real
// fusion pipeline, is compiled and run, and every boundary tensor is compared
// through its origin with the eager interpreter's run of the original graph.
// The eager side is the independent reference (core/ops shares no code with
// codegen/); when the pipeline or the interpreter is not available yet, the
// case is skipped with the reason.
#include <QtTest>

#include "codegen/compiler.h"
#include "core/eager/interpreter.h"
#include "passes/pass_manager.h"
#include "test_util.h"

using namespace fuselens;
using namespace fuselens::testing;

namespace {

// x[4,16] -> MatMul+Add+Relu -> MatMul+Add -> Softmax, plus a Transpose+Tanh branch.
Graph mlp() {
  Graph g;
  ValueId x = g.addInput("x", f32({4, 16}));
  auto c = [&](const char* name, Shape s, uint32_t seed) {
    return g.addConstant(name, std::make_shared<const TensorData>(randomTensor(s, seed)));
  };
  auto op = [&](const char* o, std::vector<ValueId> in, Shape s, const char* name,
                Attributes a = {}) {
    return g.node(g.addNode(o, in, {{name, f32(s)}}, a, name)).outputs[0];
  };
  ValueId h = op("MatMul", {x, c("w1", {16, 32}, 1)}, {4, 32}, "fc1");
  h = op("Add", {h, c("b1", {32}, 2)}, {4, 32}, "fc1_bias");
  h = op("Relu", {h}, {4, 32}, "fc1_relu");
  ValueId l = op("MatMul", {h, c("w2", {32, 10}, 3)}, {4, 10}, "fc2");
  l = op("Add", {l, c("b2", {10}, 4)}, {4, 10}, "fc2_bias");
  g.addOutput(op("Softmax", {l}, {4, 10}, "probs"));
  Attributes perm;
  perm.set("perm", std::vector<int64_t>{1, 0});
  ValueId t = op("Transpose", {h}, {32, 4}, "ht", perm);
  g.addOutput(op("Tanh", {t}, {32, 4}, "ht_tanh"));
  g.markAsOriginal();
  return g;
}

}  // namespace

class CodegenPipelineTest : public QObject {
  Q_OBJECT

 private slots:
  void fusedRunMatchesEager_data();
  void fusedRunMatchesEager();
};

void CodegenPipelineTest::fusedRunMatchesEager_data() {
  QTest::addColumn<QString>("pipeline");
  QTest::newRow("no passes") << QString();
  QTest::newRow("fuse-ops") << QString("fuse-ops");
  QTest::newRow("default pipeline") << QString::fromStdString(defaultPipeline());
}

void CodegenPipelineTest::fusedRunMatchesEager() {
  QFETCH(QString, pipeline);
  Graph original = mlp();
  std::map<std::string, TensorData> inputs = {{"x", randomTensor({4, 16}, 7)}};
  auto eager = runEager(original, inputs);
  QVERIFY2(eager.isOk(), eager.message().c_str());

  Graph optimized = original;
  if (!pipeline.isEmpty()) {
    auto specs = parsePipeline(pipeline.toStdString());
    QVERIFY2(specs.isOk(), specs.message().c_str());
    auto result = runPipeline(original, *specs);
    QVERIFY2(result.isOk(), result.message().c_str());
    optimized = result->snapshots.back().graph();
  }
  auto module = compileGraph(optimized, {});
  QVERIFY2(module, module.message().c_str());
  auto run = (*module)->run(inputs);
  QVERIFY2(run, run.message().c_str());

  int compared = 0;
  double overall = 0;
  for (ValueId v : optimized.valueIds()) {
    const auto& got = (*run)[v.index];
    ValueId origin = optimized.value(v).origin;
    const TensorData* want = eager->find(origin);
    if (!got || !want || !origin.valid()) continue;
    QCOMPARE(got->shape, want->shape);
    double worst = 0;
    for (int64_t i = 0; i < got->numel(); ++i)
      worst = std::max(worst, std::fabs(got->at(i) - want->at(i)));
    QVERIFY2(worst <= 1e-5,
             (optimized.value(v).name + " differs by " + std::to_string(worst)).c_str());
    overall = std::max(overall, worst);
    ++compared;
  }
  for (ValueId o : optimized.outputs()) QVERIFY((*run)[o.index].has_value());
  QVERIFY(compared >= 3);
  std::string names;
  for (const KernelInfo& k : (*module)->kernels()) names += " " + k.name;
  qInfo("%zu kernels:%s; %d tensors compared with eager, max abs error %.3g",
        (*module)->kernels().size(), names.c_str(), compared, overall);
  if (qEnvironmentVariableIsSet("FUSELENS_PRINT_LOOP_IR"))
    qInfo("%s", (*module)->loopIrText().c_str());
}

QTEST_APPLESS_MAIN(CodegenPipelineTest)
#include "codegen_pipeline_test.moc"
