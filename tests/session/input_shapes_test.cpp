// Input shapes for models with dynamic dims: the "x=1x3x224x224; m=1x8" text
// (CLI --shape, the GUI's box) and Session::bindInputShapes, which fixes the
// dims, binds each symbol once across the graph and refuses disagreements.
#include "session/input_shapes.h"

#include <QTemporaryDir>
#include <QtTest>

#include "session/session.h"
#include "tests/support/test_paths.h"

using namespace fuselens;

namespace {
const std::string kDynBatch =
    fuselens::test::sourcePath("/tests/fixtures/dyn_batch/model.onnx");  // x: f32[batch,8]
}

class InputShapesTest : public QObject {
  Q_OBJECT
 private slots:
  void parses() {
    auto s = parseInputShapes(" x=1x3x224x224 ; m = 2X8;s=");
    QVERIFY2(s.isOk(), s.message().c_str());
    QCOMPARE(s->size(), size_t(3));
    QCOMPARE(s->at("x"), (std::vector<int64_t>{1, 3, 224, 224}));
    QCOMPARE(s->at("m"), (std::vector<int64_t>{2, 8}));
    QVERIFY(s->at("s").empty());
    QVERIFY(parseInputShapes("").isOk());
  }

  void refusesBadText_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("says");
    QTest::newRow("no name") << "=1x2"
                             << "expected name=AxBxC";
    QTest::newRow("no equals") << "x"
                               << "expected name=AxBxC";
    QTest::newRow("letter") << "x=1xax2"
                            << "'a' is not a non-negative dim";
    QTest::newRow("negative") << "x=-1x2"
                              << "is not a non-negative dim";
    QTest::newRow("trailing x") << "x=1x"
                                << "a dim is missing";
    QTest::newRow("twice") << "x=1;x=2"
                           << "given twice";
  }
  void refusesBadText() {
    QFETCH(QString, text);
    QFETCH(QString, says);
    auto s = parseInputShapes(text.toStdString());
    QVERIFY(!s.isOk());
    QVERIFY2(QString::fromStdString(s.message()).contains(says), s.message().c_str());
  }

  void bindsAndCompiles() {
    Session s;
    QVERIFY(s.open(kDynBatch).isOk());
    auto bound = s.bindInputShapes(InputShapes{{"x", {5, 8}}});
    QVERIFY2(bound.isOk(), bound.message().c_str());
    QVERIFY(*bound);
    QVERIFY(s.original().value(s.original().inputs()[0]).type.isStatic());
    for (ValueId v : s.original().outputs()) QVERIFY(s.original().value(v).type.isStatic());
    QVERIFY(s.optimize(defaultPipeline()).isOk());
    auto rep = s.compare(*s.randomInputs(1), Tolerance{});
    QVERIFY2(rep.isOk(), rep.message().c_str());
    QVERIFY(rep->allWithin());
    // Already static: nothing to do, nothing changes.
    auto again = s.bindInputShapes(InputShapes{{"x", {5, 8}}});
    QVERIFY(again.isOk() && !*again);
  }

  // Values whose dims are expressions of seq (seq*2, seq*2-1) name only seq as
  // a dim to bind; binding it, by --dim or by an input's shape, fixes them all.
  void expressionsOfADimBindWithIt() {
    const std::string model =
        fuselens::test::sourcePath("/tests/cli/data/dyn_concat_slice/model.onnx");
    Session s;
    QVERIFY(s.open(model).isOk());
    QCOMPARE(s.symbolicDims(), std::vector<std::string>{"seq"});
    const Graph& g = s.original();
    QCOMPARE(QString::fromStdString(g.value(g.outputs()[0]).type.str()),
             QString("f32[1,seq*2-1,4]"));
    QVERIFY(s.bindDims({{"seq", 7}}).isOk());
    QCOMPARE(QString::fromStdString(g.value(g.outputs()[0]).type.str()), QString("f32[1,13,4]"));
    QCOMPARE(QString::fromStdString(g.value(g.outputs()[1]).type.str()), QString("f32[1,4,7]"));
    Session byShape;
    QVERIFY(byShape.open(model).isOk());
    auto bound = byShape.bindInputShapes(InputShapes{{"x", {1, 300, 8}}});
    QVERIFY2(bound.isOk() && *bound, bound.message().c_str());
    for (ValueId v : byShape.original().valueIds())
      QVERIFY2(byShape.original().value(v).type.isStatic(),
               byShape.original().value(v).type.str().c_str());
    QCOMPARE(QString::fromStdString(
                 byShape.original().value(byShape.original().outputs()[0]).type.str()),
             QString("f32[1,599,4]"));
  }

  void savedWithTheSession() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("dyn.fuselens.json").toStdString();
    {
      Session s;
      QVERIFY(s.open(kDynBatch).isOk());
      QVERIFY(s.bindInputShapes(InputShapes{{"x", {5, 8}}}).isOk());
      QVERIFY(s.optimize(defaultPipeline()).isOk());
      QVERIFY(s.save(path).isOk());
    }
    Session r;
    auto warnings = r.restore(path);
    QVERIFY2(warnings.isOk(), warnings.message().c_str());
    QCOMPARE(r.boundInputShapes().at("x"), (std::vector<int64_t>{5, 8}));
    QVERIFY(r.original().value(r.original().inputs()[0]).type.isStatic());
    QVERIFY(r.compare(*r.randomInputs(2), Tolerance{}).isOk());

    QFile f(QString::fromStdString(path));
    QVERIFY(f.open(QIODevice::ReadOnly));
    QByteArray text = f.readAll().replace("5,", "-5,").replace("5\n", "-5\n");
    f.close();
    QVERIFY(text.contains("-5"));
    QFile w(QString::fromStdString(path));
    QVERIFY(w.open(QIODevice::WriteOnly | QIODevice::Truncate));
    w.write(text);
    w.close();
    auto bad = Session().restore(path);
    QVERIFY(!bad.isOk());
    QVERIFY2(QString::fromStdString(bad.message()).contains("negative dim"), bad.message().c_str());
  }

  void refusesDisagreements_data() {
    QTest::addColumn<int>("rank");
    QTest::addColumn<int>("inner");
    QTest::addColumn<QString>("says");
    QTest::newRow("rank") << 3 << 8 << "the tensor has rank 3";
    QTest::newRow("static dim") << 2 << 7 << "dim 1 is 7 but the model declares";
  }
  void refusesDisagreements() {
    QFETCH(int, rank);
    QFETCH(int, inner);
    QFETCH(QString, says);
    Session s;
    QVERIFY(s.open(kDynBatch).isOk());
    std::vector<int64_t> shape =
        rank == 3 ? std::vector<int64_t>{2, 2, inner} : std::vector<int64_t>{2, inner};
    auto bound = s.bindInputShapes(InputShapes{{"x", shape}});
    QVERIFY(!bound.isOk());
    QVERIFY2(QString::fromStdString(bound.message()).contains(says), bound.message().c_str());
    QVERIFY(QString::fromStdString(bound.message()).contains("input 'x'"));
  }
};

QTEST_GUILESS_MAIN(InputShapesTest)
#include "input_shapes_test.moc"
