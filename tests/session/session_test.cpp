// Session end to end on the samples (open, optimize, compile, compare with
// every boundary tensor traced to the eager run through origins), and saving
// and restoring a session file, including the bad-file cases.
#include "session/session.h"

#include <QtTest>

#include "core/ir/printer.h"
#include "session/session_file.h"
#include "tests/support/test_paths.h"

using namespace fuselens;

namespace {
std::string sample(const char* name) { return fuselens::test::sourcePath("/samples/") + name; }
}  // namespace

class SessionTest : public QObject {
  Q_OBJECT
 private slots:
  void compareTracesEveryBoundaryTensor() {
    Session s;
    QVERIFY(s.open(sample("mlp.onnx")).isOk());
    QVERIFY(s.optimize(defaultPipeline()).isOk());
    GraphStats st = graphStats(s.finalGraph());
    QCOMPARE(st.fusedGroups, size_t(2));
    QCOMPARE(st.kernels, size_t(3));  // two groups and the softmax
    auto inputs = s.randomInputs(7);
    QVERIFY(inputs.isOk());
    auto rep = s.compare(*inputs, Tolerance{1e-4, 1e-4});
    QVERIFY2(rep.isOk(), rep.message().c_str());
    QVERIFY(rep->allWithin());
    QCOMPARE(rep->rows.size(), size_t(4));  // x, group0, group1, softmax outputs
    QVERIFY(rep->firstDivergent() == nullptr);
  }

  // An If's branches compile through the session's pipeline too: a
  // Mul -> Add -> Relu branch is one fused kernel under the default pipeline,
  // three with none; both runs match eager through compare.
  void branchesCompileThroughThePipeline_data() {
    QTest::addColumn<QString>("pipeline");
    QTest::addColumn<QString>("listing");
    QTest::newRow("default") << QString::fromStdString(defaultPipeline())
                             << "If: both branches compiled (1 + 1 kernels)";
    QTest::newRow("none") << ""
                          << "If: both branches compiled (3 + 3 kernels)";
  }
  void branchesCompileThroughThePipeline() {
    QFETCH(QString, pipeline);
    QFETCH(QString, listing);
    auto g = parseGraph(R"(graph @main(%c: bool[], %x: f32[4,8]) -> (f32[4,8]) {
  %y = If(%c, %x) {then_branch=graph @then(%x: f32[4,8]) -> (f32[4,8]) {
      %k = Constant : f32[] dense<[2.0]>
      %a = Mul(%x, %k) : f32[4,8]
      %b = Add(%a, %x) : f32[4,8]
      %t = Relu(%b) : f32[4,8]
      return %t
    }, else_branch=graph @else(%x: f32[4,8]) -> (f32[4,8]) {
      %k = Constant : f32[] dense<[-1.5]>
      %a = Mul(%x, %k) : f32[4,8]
      %b = Sub(%a, %x) : f32[4,8]
      %e = Relu(%b) : f32[4,8]
      return %e
    }, implicit_inputs=["x"]} : f32[4,8] loc("If_0")
  return %y
})");
    QVERIFY2(g.isOk(), g.message().c_str());
    g->markAsOriginal();
    Session s;
    QVERIFY(s.open(std::move(*g), "if").isOk());
    QVERIFY(s.optimize(pipeline.toStdString()).isOk());
    QVERIFY(s.compile().isOk());
    const std::string ir = s.compiled()->loopIrText();
    QVERIFY2(ir.find(listing.toStdString()) != std::string::npos, ir.c_str());
    for (uint8_t c : {uint8_t(1), uint8_t(0)}) {
      TensorData x(DType::F32, {4, 8});
      for (int i = 0; i < 32; ++i) x.data<float>()[i] = float(i % 7) - 3.0f;
      auto rep = s.compare(
          {{"c", TensorData::fromVector(DType::Bool, {}, std::vector<uint8_t>{c})}, {"x", x}},
          Tolerance{1e-5, 1e-5});
      QVERIFY2(rep.isOk(), rep.message().c_str());
      QVERIFY(rep->allWithin());
    }
  }

  // The default check: every tensor judged against its expected f32 rounding
  // error, with the expected error and verdict on every row.
  void defaultCompareIsRoundingAware() {
    Session s;
    QVERIFY(s.open(sample("mlp.onnx")).isOk());
    QVERIFY(s.optimize(defaultPipeline()).isOk());
    auto rep = s.compare(*s.randomInputs(7), CompareOptions{});
    QVERIFY2(rep.isOk(), rep.message().c_str());
    QVERIFY2(rep->allWithin(), rep->verdict().c_str());
    QVERIFY(rep->referenceNote.empty());
    QVERIFY(QString::fromStdString(rep->verdict()).startsWith("PASS: 4 tensors within rounding"));
    for (const CompareRow& r : rep->rows) {
      QVERIFY(r.rounding.has_value());
      QVERIFY(r.rounding->expected > 0);
      QVERIFY2(r.rounding->ratio <= kRoundingMargin, rowStatus(r).c_str());
      QCOMPARE(rowStatus(r), std::string("within rounding"));
    }
  }

  void zeroToleranceNamesFirstDivergentInTopologicalOrder() {
    Session s;
    QVERIFY(s.open(sample("mlp.onnx")).isOk());
    QVERIFY(s.optimize(defaultPipeline()).isOk());
    auto rep = s.compare(*s.randomInputs(7), Tolerance{0, 0});
    QVERIFY(rep.isOk());
    const CompareRow* first = rep->firstDivergent();
    if (!first) QSKIP("bit-identical on this machine");
    for (const CompareRow& r : rep->rows) {
      if (&r == first) break;
      QVERIFY(r.metrics.withinTolerance());
    }
  }

  void saveAndRestore() {
    QTemporaryDir dir;
    std::string model = dir.filePath("m.onnx").toStdString();
    QVERIFY(QFile::copy(QString::fromStdString(sample("matmul_bias_relu.onnx")),
                        QString::fromStdString(model)));
    Session s;
    QVERIFY(s.open(model).isOk());
    QVERIFY(s.optimize("dce,fuse-ops{max-ops=4}").isOk());
    s.compareOptions = Tolerance{1e-3, 2e-3};
    s.compareOptions.stat = *ErrorStat::parse("quantile:0.99");
    s.seed = 42;
    s.bookmarks = {"y"};
    std::string path = dir.filePath("work.fuselens.json").toStdString();
    QVERIFY(s.save(path).isOk());

    Session r;
    auto warnings = r.restore(path);
    QVERIFY2(warnings.isOk(), warnings.message().c_str());
    QVERIFY(warnings->empty());
    QCOMPARE(r.pipeline(), std::string("dce,fuse-ops{max-ops=4}"));
    QCOMPARE(r.snapshots().size(), size_t(3));
    QCOMPARE(r.compareOptions.tolerance.rtol, 2e-3);
    QVERIFY(!r.compareOptions.rounding());
    QCOMPARE(r.compareOptions.stat.str(), std::string("quantile:0.99"));
    QCOMPARE(r.seed, uint64_t(42));
    QCOMPARE(r.bookmarks, std::vector<std::string>{"y"});

    // The model file is replaced by another model: restore warns, still opens.
    QVERIFY(QFile::remove(QString::fromStdString(model)));
    QVERIFY(QFile::copy(QString::fromStdString(sample("mlp.onnx")), QString::fromStdString(model)));
    Session changed;
    auto w2 = changed.restore(path);
    QVERIFY2(w2.isOk(), w2.message().c_str());
    QCOMPARE(w2->size(), size_t(1));
    QVERIFY(QString::fromStdString(w2->front().message).contains("changed"));
  }

  void badSessionFiles_data() {
    QTest::addColumn<QString>("content");
    QTest::addColumn<QString>("expected");
    QTest::newRow("not-json") << "{oops"
                              << "does not parse";
    QTest::newRow("other-json") << "{\"a\": 1}"
                                << "not a FuseLens session file";
    QTest::newRow("missing-pipeline") << "{\"fuselens_session\": 1, \"model\": \"m.onnx\"}"
                                      << "missing";
    QTest::newRow("model-gone")
        << "{\"fuselens_session\": 1, \"model\": \"gone.onnx\", \"pipeline\": \"dce\"}"
        << "cannot be read";
  }
  void badSessionFiles() {
    QFETCH(QString, content);
    QFETCH(QString, expected);
    QTemporaryDir dir;
    QString path = dir.filePath("s.json");
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(content.toUtf8());
    f.close();
    Session s;
    auto r = s.restore(path.toStdString());
    QVERIFY(!r.isOk());
    QVERIFY2(QString::fromStdString(r.message()).contains(expected), r.message().c_str());
  }
};

QTEST_APPLESS_MAIN(SessionTest)
#include "session_test.moc"
