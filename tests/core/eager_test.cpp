// The eager interpreter against ONNX Runtime: every fixture under
// tests/fixtures (and the two samples) is imported and run eagerly, and each
// output must match the ORT output stored beside it within its op family's
// tolerance. Also the interpreter's own contract: input checks, unknown ops,
// fused groups, dropping intermediates, cancel and progress.
#include <QtTest>
#include <cmath>
#include <cstring>

#include "core/eager/interpreter.h"
#include "core/io/npy.h"
#include "core/onnx/import.h"
#include "core/ops/registry.h"
#include "fixture_compare.h"
#include "fixture_util.h"
#include "tests/support/test_paths.h"

using namespace fuselens;
using namespace fuselens::test;

namespace {

Expected<ImportedModel> importSample(const char* name) {
  return importOnnxFile(fuselens::test::sourcePath() + "/samples/" + name + ".onnx");
}

std::map<std::string, TensorData> sampleInputs(const char* name) {
  std::string err;
  return loadNpys(fixturesDir() / "samples" / name, "input_", err);
}

}  // namespace

class EagerTest : public QObject {
  Q_OBJECT

 private slots:
  void matchesOnnxRuntime_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("dir");
    for (const auto& c : fixtureCases()) {
      if (hasReferenceOutputs(c))
        QTest::newRow(c.name.c_str())
            << QString::fromStdString(c.model.string()) << QString::fromStdString(c.dir.string());
    }
  }

  void matchesOnnxRuntime() {
    QFETCH(QString, model);
    QFETCH(QString, dir);
    auto m = importOnnxFile(model.toStdString());
    QVERIFY2(m.isOk(), m.message().c_str());
    std::string err;
    auto inputs = loadNpys(dir.toStdString(), "input_", err);
    auto outputs = loadNpys(dir.toStdString(), "output_", err);
    QVERIFY2(err.empty(), err.c_str());
    QVERIFY(!outputs.empty());
    auto r = runEager(m->graph, inputs);
    QVERIFY2(r.isOk(), r.message().c_str());
    FamilyTolerance tol = toleranceFor(QTest::currentDataTag());
    for (const auto& [name, ref] : outputs) {
      auto v = m->graph.findValue(name);
      QVERIFY2(v && m->graph.isGraphOutput(*v), ("no graph output " + name).c_str());
      const TensorData* got = r->find(*v);
      QVERIFY(got);
      std::string diff = mismatch(ref, *got, tol.atol, tol.rtol);
      QVERIFY2(diff.empty(), (name + ": " + diff).c_str());
    }
  }

  void missingInputIsOneSentence() {
    auto m = importSample("matmul_bias_relu");
    QVERIFY(m.isOk());
    auto r = runEager(m->graph, {});
    QVERIFY(!r.isOk());
    QCOMPARE(QString::fromStdString(r.message()), "missing input 'x' of type f32[1,128]");
  }

  void wrongShapeAndDtypeAreRefused() {
    auto m = importSample("matmul_bias_relu");
    QVERIFY(m.isOk());
    auto bad = runEager(m->graph, {{"x", TensorData(DType::F32, {1, 127})}});
    QVERIFY(!bad.isOk());
    QVERIFY2(
        bad.message().find("input 'x': has shape [1,127] but the model expects f32[1,128]") == 0,
        bad.message().c_str());
    auto f64 = runEager(m->graph, {{"x", TensorData(DType::F64, {1, 128})}});
    QVERIFY(!f64.isOk());
    QCOMPARE(QString::fromStdString(f64.message()),
             "input 'x': has element type f64 but the model expects f32[1,128]");
  }

  void symbolsBindAcrossRuns() {
    auto m = importOnnxFile((fixturesDir() / "dyn_batch" / "model.onnx").string());
    QVERIFY(m.isOk());
    auto r = runEager(m->graph, {{"x", TensorData(DType::F32, {5, 8})}});
    QVERIFY2(r.isOk(), r.message().c_str());
    QCOMPARE(r->find(m->graph.outputs()[0])->shape, (std::vector<int64_t>{5, 4}));
    auto bad = runEager(m->graph, {{"x", TensorData(DType::F32, {5, 9})}});
    QVERIFY(!bad.isOk());
  }

  void unknownOpFailsWhenRun() {
    auto m = importOnnxFile((fixturesDir() / "unknown_op" / "model.onnx").string());
    QVERIFY(m.isOk());
    auto r = runEager(m->graph, {{"x", TensorData(DType::F32, {2, 3})}});
    QVERIFY(!r.isOk());
    QCOMPARE(QString::fromStdString(r.message()),
             "node 'foo' (FooBar): no eager kernel for op FooBar (domain com.example)");
  }

  void droppingIntermediatesKeepsOutputs() {
    auto m = importSample("mlp");
    QVERIFY(m.isOk());
    auto inputs = sampleInputs("mlp");
    auto all = runEager(m->graph, inputs);
    EagerOptions lean;
    lean.keepIntermediates = false;
    auto few = runEager(m->graph, inputs, lean);
    QVERIFY(all.isOk() && few.isOk());
    int kept = 0;
    for (const auto& t : few->tensors) kept += t.has_value();
    QCOMPARE(kept, 2);  // the input and the output
    ValueId y = m->graph.outputs()[0];
    QVERIFY(mismatch(*all->find(y), *few->find(y), 0, 0).empty());
    ValueId h1 = *m->graph.findValue("h1");
    QVERIFY(all->find(h1) && !few->find(h1));
    // A chosen intermediate survives the lean run, equal to the full run's.
    lean.keep = {h1};
    auto chosen = runEager(m->graph, inputs, lean);
    QVERIFY(chosen.isOk() && chosen->find(h1));
    QVERIFY(mismatch(*all->find(h1), *chosen->find(h1), 0, 0).empty());
  }

  void fusedGroupRunsItsBody() {
    // y = Relu(a + b) as one Fused node, against the same ops unfused.
    auto body = std::make_shared<Graph>();
    TensorType t = TensorType::of(DType::F32, {2, 3});
    ValueId ba = body->addInput("a", t), bb = body->addInput("b", TensorType::of(DType::F32, {3}));
    NodeId add = body->addNode("Add", {ba, bb}, {{"s", t}}, {}, "add");
    NodeId relu = body->addNode("Relu", {body->node(add).outputs[0]}, {{"r", t}}, {}, "relu");
    body->addOutput(body->node(relu).outputs[0]);

    Graph g;
    ValueId x = g.addInput("x", t);
    auto bias = std::make_shared<TensorData>(
        TensorData::fromVector(DType::F32, {3}, std::vector<float>{-0.5f, 0.f, 0.5f}));
    ValueId c = g.addConstant("bias", bias);
    Attributes attrs;
    attrs.set("group", int64_t(0));
    attrs.set("kind", std::string("ElemWise"));
    NodeId f = g.addNode(kFusedOp, {x, c}, {{"y", t}}, attrs, "group0");
    g.mutableNode(f).domain = kFuseLensDomain;
    g.mutableNode(f).body = body;
    g.addOutput(g.node(f).outputs[0]);
    QCOMPARE(patternKindOf(g, f), PatternKind::Opaque);
    QVERIFY(inferNodeTypes(g, f).isOk());
    QCOMPARE(g.value(g.node(f).outputs[0]).type, t);

    auto xs =
        TensorData::fromVector(DType::F32, {2, 3}, std::vector<float>{1, -1, 0, 0.25f, 2, -3});
    auto r = runEager(g, {{"x", xs}});
    QVERIFY2(r.isOk(), r.message().c_str());
    std::vector<float> want{0.5f, 0, 0.5f, 0, 2, 0};
    const TensorData* y = r->find(g.outputs()[0]);
    QVERIFY(y);
    QCOMPARE(std::vector<float>(y->data<float>(), y->data<float>() + 6), want);
  }

  void integerDivisionByZeroIsAnError() {
    Graph g;
    TensorType t = TensorType::of(DType::I32, {2});
    ValueId a = g.addInput("a", t), b = g.addInput("b", t);
    NodeId d = g.addNode("Div", {a, b}, {{"y", t}}, {}, "div");
    g.addOutput(g.node(d).outputs[0]);
    auto ta = TensorData::fromVector(DType::I32, {2}, std::vector<int32_t>{4, 5});
    auto tb = TensorData::fromVector(DType::I32, {2}, std::vector<int32_t>{2, 0});
    auto r = runEager(g, {{"a", ta}, {"b", tb}});
    QVERIFY(!r.isOk());
    QCOMPARE(QString::fromStdString(r.message()), "node 'div' (Div): integer division by zero");
  }

  void cancelAndProgress() {
    auto m = importSample("mlp");
    QVERIFY(m.isOk());
    auto inputs = sampleInputs("mlp");
    CancelToken cancel;
    cancel.cancel();
    auto r = runEager(m->graph, inputs, {}, {}, cancel);
    QVERIFY(!r.isOk());
    QCOMPARE(QString::fromStdString(r.message()), "cancelled");

    std::vector<double> fractions;
    auto ok = runEager(m->graph, inputs, {},
                       [&](double f, const std::string&) { fractions.push_back(f); });
    QVERIFY(ok.isOk());
    QCOMPARE(fractions.size(), m->graph.nodeCount() + 1);  // one per node, then done
    QVERIFY(std::is_sorted(fractions.begin(), fractions.end()));
    QCOMPARE(fractions.back(), 1.0);
  }
};

QTEST_APPLESS_MAIN(EagerTest)
#include "eager_test.moc"
