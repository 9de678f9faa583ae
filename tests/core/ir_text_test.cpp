// The IR text format round-trips, and malformed text gives an error with a
// line and column instead of a crash; the verifier catches broken graphs.
#include <QtTest>

#include "core/eager/interpreter.h"
#include "core/ir/printer.h"
#include "core/ir/verifier.h"
#include "core/onnx/import.h"
#include "fixture_util.h"
#include "tests/support/test_paths.h"

using namespace fuselens;

namespace {
QString readText(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  return QString::fromUtf8(f.readAll());
}
std::string matmulBiasRelu() {
  return readText(QString::fromStdString(
                      fuselens::test::sourcePath("/tests/core/ir_text/matmul-bias-relu.fl")))
      .toStdString();
}
}  // namespace

class IrTextTest : public QObject {
  Q_OBJECT
 private slots:
  void controlFlowBodiesRoundTrip_data();
  void controlFlowBodiesRoundTrip();
  void roundTrip_data() {
    QTest::addColumn<QString>("path");
    QDir dir(QString::fromStdString(fuselens::test::sourcePath("/tests/core/ir_text")));
    for (const QString& f : dir.entryList({"*.fl"}, QDir::Files, QDir::Name))
      QTest::newRow(f.toUtf8().constData()) << dir.filePath(f);
  }
  void roundTrip() {
    QFETCH(QString, path);
    QString text = readText(path);
    auto g = parseGraph(text.toStdString());
    QVERIFY2(g.isOk(), g.message().c_str());
    QVERIFY2(verifyGraph(*g).isOk(), verifyGraph(*g).message().c_str());
    PrintOptions all;
    all.elideConstantsOver = -1;
    QCOMPARE(QString::fromStdString(printGraph(*g, all)), text);
  }

  void parseErrors_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("expected");
    QTest::newRow("undefined-value")
        << "graph @m(%x: f32[1]) -> (f32[1]) {\n  %y = Relu(%z) : f32[1]\n  return %y\n}"
        << "line 2, column 13: value %z is used before it is defined";
    QTest::newRow("bad-dtype") << "graph @m(%x: q7[1]) -> (f32[1]) {}"
                               << "unknown element type 'q7'";
    QTest::newRow("redefined")
        << "graph @m(%x: f32[1]) -> (f32[1]) {\n  %x = Relu(%x) : f32[1]\n  return %x\n}"
        << "value %x is defined twice";
    QTest::newRow("wrong-constant-count")
        << "graph @m() -> (f32[2]) {\n  %c = Constant : f32[2] dense<[1.0]>\n  return %c\n}"
        << "has 1 values but its type f32[2] needs 2";
    QTest::newRow("elided-constant")
        << "graph @m() -> (f32[2]) {\n  %c = Constant : f32[2] dense<...>\n  return %c\n}"
        << "printed elided";
    QTest::newRow("truncated") << "graph @m(%x: f32[1]) -> (f32[1]) {\n  %y = Relu(%x"
                               << "found the end of the text";
    QTest::newRow("return-type-mismatch") << "graph @m(%x: f32[1]) -> (f32[2]) {\n  return %x\n}"
                                          << "but the signature says f32[2]";
    QTest::newRow("stray-character") << "graph @m(%x: f32[1]) -> (f32[1]) { $ }"
                                     << "unexpected character '$'";
  }
  void parseErrors() {
    QFETCH(QString, text);
    QFETCH(QString, expected);
    auto g = parseGraph(text.toStdString());
    QVERIFY(!g.isOk());
    QVERIFY2(QString::fromStdString(g.message()).contains(expected), g.message().c_str());
  }

  void elidedPrinting() {
    auto g = parseGraph("graph @m() -> (f32[20]) {\n  %c = Constant : f32[20] dense<[" +
                        std::string("1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, ") +
                        "1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]>\n  return %c\n}");
    QVERIFY2(g.isOk(), g.message().c_str());
    QVERIFY(QString::fromStdString(printGraph(*g)).contains("dense<...>"));
  }

  void verifierCatchesCycle() {
    Graph g;
    ValueId x = g.addInput("x", TensorType::of(DType::F32, {2}));
    NodeId a = g.addNode("Relu", {x}, {{"a", TensorType::of(DType::F32, {2})}});
    NodeId b = g.addNode("Relu", {g.node(a).outputs[0]}, {{"b", TensorType::of(DType::F32, {2})}});
    g.setInput(a, 0, g.node(b).outputs[0]);  // a reads b, b reads a
    g.addOutput(g.node(b).outputs[0]);
    Status s = verifyGraph(g);
    QVERIFY(!s.isOk());
    QVERIFY2(QString::fromStdString(s.message()).contains("cycle"), s.message().c_str());
  }

  void verifierCatchesBodyMismatch() {
    auto body =
        parseGraph("graph @b(%x: f32[3]) -> (f32[3]) {\n  %y = Relu(%x) : f32[3]\n  return %y\n}");
    QVERIFY(body.isOk());
    Graph g;
    ValueId x = g.addInput("x", TensorType::of(DType::F32, {4}));
    NodeId f = g.addNode(kFusedOp, {x}, {{"y", TensorType::of(DType::F32, {4})}});
    g.mutableNode(f).body = std::make_shared<const Graph>(*body);
    g.addOutput(g.node(f).outputs[0]);
    Status s = verifyGraph(g);
    QVERIFY(!s.isOk());
    QVERIFY2(QString::fromStdString(s.message()).contains("body input 0 has type f32[3]"),
             s.message().c_str());
  }

  void removeAndReplaceKeepUseLists() {
    auto g = parseGraph(matmulBiasRelu());
    QVERIFY(g.isOk());
    ValueId relu = g->outputs()[0];
    ValueId add = g->node(g->value(relu).producer).inputs[0];
    g->replaceAllUses(relu, add);
    g->removeNode(g->value(relu).producer);
    QVERIFY(verifyGraph(*g).isOk());
    QCOMPARE(g->nodeCount(), size_t(2));
    QCOMPARE(g->outputs()[0], add);
  }
};

// Control-flow bodies print inline: an imported If/Loop/Scan model prints,
// parses back to the same text, and the parsed graph still runs to ONNX
// Runtime's outputs. FUSELENS_DUMP_IR=dir writes the texts (to refresh the
// .fl files under tests/core/ir_text/).
void IrTextTest::controlFlowBodiesRoundTrip_data() {
  QTest::addColumn<QString>("fixture");
  for (const char* f : {"cf_if_nested", "cf_loop", "cf_scan_axes_reverse"}) QTest::newRow(f) << f;
}

void IrTextTest::controlFlowBodiesRoundTrip() {
  QFETCH(QString, fixture);
  auto dir = fuselens::test::fixturesDir() / fixture.toStdString();
  auto m = importOnnxFile((dir / "model.onnx").string());
  QVERIFY2(m.isOk(), m.message().c_str());
  PrintOptions all;
  all.elideConstantsOver = -1;
  std::string text = printGraph(m->graph, all);
  QVERIFY2(text.find("graph<@") == std::string::npos, text.c_str());
  if (QByteArray out = qgetenv("FUSELENS_DUMP_IR"); !out.isEmpty()) {
    QFile f(QString::fromUtf8(out) + "/" + fixture + ".fl");
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(QByteArray::fromStdString(text));
  }
  auto g = parseGraph(text);
  QVERIFY2(g.isOk(), (g.message() + "\n" + text).c_str());
  QCOMPARE(QString::fromStdString(printGraph(*g, all)), QString::fromStdString(text));
  std::map<std::string, TensorData> inputs;
  for (ValueId v : g->inputs()) {
    auto t = readNpy((dir / ("input_" + g->value(v).name + ".npy")).string());
    QVERIFY2(t.isOk(), t.message().c_str());
    inputs.emplace(g->value(v).name, std::move(*t));
  }
  auto r = runEager(*g, inputs);
  QVERIFY2(r.isOk(), r.message().c_str());
  for (ValueId v : g->outputs()) {
    auto want = readNpy((dir / ("output_" + g->value(v).name + ".npy")).string());
    QVERIFY2(want.isOk(), want.message().c_str());
    const TensorData* got = r->find(v);
    QVERIFY(got);
    QCOMPARE(got->shape, want->shape);
    for (int64_t i = 0; i < want->numel(); ++i)
      QVERIFY2(std::fabs(got->at(i) - want->at(i)) <= 1e-5 + 1e-5 * std::fabs(want->at(i)),
               qPrintable(QString("%1[%2]").arg(QString::fromStdString(g->value(v).name)).arg(i)));
  }
}

QTEST_APPLESS_MAIN(IrTextTest)
#include "ir_text_test.moc"
