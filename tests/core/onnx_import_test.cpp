// ONNX import: every fixture imports with the types ONNX Runtime produced
// (shape inference, not declared shapes, since fixture outputs declare none);
// names, opsets and symbolic dims are kept; older opsets are canonicalized;
// unknown ops import as Opaque with a warning; and broken or hostile files
// give one sentence instead of a crash.
#include <QtTest>
#include <fstream>

#include "core/onnx/import.h"
#include "core/ops/registry.h"
#include "fixture_util.h"

using namespace fuselens;
using namespace fuselens::test;

namespace {

std::string fixtureModel(const std::string& name) {
  return (fixturesDir() / name / "model.onnx").string();
}

std::string badModel(const std::string& name) {
  return (fixturesDir() / "bad_models" / (name + ".onnx")).string();
}

std::vector<std::string> opsOf(const Graph& g) {
  std::vector<std::string> ops;
  auto order = g.topoOrder();
  for (NodeId n : *order) ops.push_back(g.node(n).op);
  return ops;
}

}  // namespace

class OnnxImportTest : public QObject {
  Q_OBJECT

 private slots:
  void everyFixtureImportsWithOrtTypes_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("dir");
    for (const auto& c : fixtureCases())
      QTest::newRow(c.name.c_str())
          << QString::fromStdString(c.model.string()) << QString::fromStdString(c.dir.string());
  }

  void everyFixtureImportsWithOrtTypes() {
    QFETCH(QString, model);
    QFETCH(QString, dir);
    auto m = importOnnxFile(model.toStdString());
    QVERIFY2(m.isOk(), m.message().c_str());
    std::string err;
    auto outputs = loadNpys(dir.toStdString(), "output_", err);
    QVERIFY2(err.empty(), err.c_str());
    for (const auto& [name, ref] : outputs) {
      auto v = m->graph.findValue(name);
      QVERIFY2(v.has_value(), name.c_str());
      // Inferred types must agree with ORT's; a symbolic dim stands for any size.
      const TensorType& t = m->graph.value(*v).type;
      bool same = t.dtype == ref.dtype && t.rankKnown && t.rank() == ref.rank();
      for (size_t i = 0; same && i < t.rank(); ++i)
        same =
            t.shape[i].isStatic() ? t.shape[i].value == ref.shape[i] : !t.shape[i].symbol.empty();
      QVERIFY2(same, (t.str() + " vs ORT's " + ref.type().str()).c_str());
    }
    // Every node and value is its own origin after import.
    for (NodeId n : m->graph.nodeIds()) QCOMPARE(m->graph.node(n).origins, std::vector<NodeId>{n});
    for (ValueId v : m->graph.valueIds()) QCOMPARE(m->graph.value(v).origin, v);
  }

  void sampleKeepsNamesOpsetsAndProducer() {
    auto m = importOnnxFile(std::string(FUSELENS_SOURCE_DIR) + "/samples/mlp.onnx");
    QVERIFY2(m.isOk(), m.message().c_str());
    QCOMPARE(m->irVersion, int64_t(8));
    QCOMPARE(m->opsets.at(""), int64_t(17));
    QCOMPARE(QString::fromStdString(m->producer), "fuselens-samples");
    QVERIFY(m->diagnostics.empty());
    const Graph& g = m->graph;
    QCOMPARE(g.inputs().size(), size_t(1));  // weights are constants, not inputs
    QCOMPARE(g.constants().size(), size_t(4));
    auto fc1 = g.findNode("fc1");
    QVERIFY(fc1);
    QCOMPARE(QString::fromStdString(g.node(*fc1).op), "Gemm");
    QCOMPARE(g.node(*fc1).attrs.getInt("transB", 0), int64_t(1));
    QCOMPARE(patternKindOf(g, *fc1), PatternKind::OutEWiseFusable);
    QCOMPARE(QString::fromStdString(g.value(*g.findValue("h1")).type.str()), "f32[4,128]");
    QCOMPARE(patternKindOf(g, *g.findNode("fc2_bias")), PatternKind::Broadcast);
    QCOMPARE(patternKindOf(g, *g.findNode("relu1")), PatternKind::ElemWise);
    QCOMPARE(patternKindOf(g, *g.findNode("softmax")), PatternKind::CommReduce);
  }

  void symbolicDimsSurviveInference() {
    auto m = importOnnxFile(fixtureModel("dyn_batch"));
    QVERIFY(m.isOk());
    QCOMPARE(QString::fromStdString(m->graph.value(m->graph.inputs()[0]).type.str()),
             "f32[batch,8]");
    QCOMPARE(QString::fromStdString(m->graph.value(m->graph.outputs()[0]).type.str()),
             "f32[batch,4]");
  }

  void constantNodesBecomeConstants() {
    auto m = importOnnxFile(fixtureModel("constant_node"));
    QVERIFY(m.isOk());
    QCOMPARE(m->graph.nodeCount(), size_t(2));  // Add and Mul; the Constants are values
    auto two = m->graph.findValue("two");
    QVERIFY(two && m->graph.value(*two).constant);
    QCOMPARE(m->graph.value(*two).constant->at(0), 2.0);
    QCOMPARE(QString::fromStdString(m->graph.value(*m->graph.findValue("c")).type.str()), "f32[3]");
  }

  void unsortedUnnamedNodesAreSortedAndNamed() {
    auto m = importOnnxFile(fixtureModel("unsorted_nodes"));
    QVERIFY2(m.isOk(), m.message().c_str());
    QVERIFY(m->graph.findNode("Add_0") && m->graph.findNode("Relu_0"));
  }

  void softmaxBeforeOpset13IsCanonicalized() {
    auto last = importOnnxFile(fixtureModel("softmax11_last"));
    QVERIFY(last.isOk());
    QCOMPARE(opsOf(last->graph), (std::vector<std::string>{"Softmax"}));
    NodeId sm = last->graph.nodeIds()[0];
    QCOMPARE(last->graph.node(sm).attrs.getInt("axis", 0), int64_t(-1));

    auto mid = importOnnxFile(fixtureModel("softmax11_axis1"));
    QVERIFY(mid.isOk());
    QCOMPARE(opsOf(mid->graph), (std::vector<std::string>{"Reshape", "Softmax", "Reshape"}));
    ValueId y = mid->graph.outputs()[0];
    QCOMPARE(QString::fromStdString(mid->graph.value(y).name), "y");
    QCOMPARE(QString::fromStdString(mid->graph.value(y).type.str()), "f32[2,3,5]");
    QCOMPARE(QString::fromStdString(mid->graph.value(*mid->graph.findValue("y/in_2d")).type.str()),
             "f32[2,15]");
    QCOMPARE(mid->diagnostics.size(), size_t(1));
    QCOMPARE(mid->diagnostics[0].severity, Severity::Note);
  }

  void legacyFormsAreCanonicalized() {
    auto reshape = importOnnxFile(fixtureModel("legacy_reshape_opset4"));
    QVERIFY2(reshape.isOk(), reshape.message().c_str());
    NodeId r = reshape->graph.nodeIds()[0];
    QCOMPARE(reshape->graph.node(r).inputs.size(), size_t(2));
    QVERIFY(!reshape->graph.node(r).attrs.has("shape"));
    auto add = importOnnxFile(fixtureModel("legacy_add_axis_opset6"));
    QVERIFY2(add.isOk(), add.message().c_str());
    NodeId a = add->graph.nodeIds()[0];
    QVERIFY(!add->graph.node(a).attrs.has("broadcast") && !add->graph.node(a).attrs.has("axis"));
    QCOMPARE(QString::fromStdString(add->graph.value(add->graph.node(a).inputs[1]).type.str()),
             "f32[3,1]");
  }

  void unknownOpImportsAsOpaqueWithWarning() {
    auto m = importOnnxFile(fixtureModel("unknown_op"));
    QVERIFY2(m.isOk(), m.message().c_str());
    auto foo = m->graph.findNode("foo");
    QVERIFY(foo);
    const Node& n = m->graph.node(*foo);
    QCOMPARE(QString::fromStdString(n.op), "FooBar");
    QCOMPARE(QString::fromStdString(n.domain), "com.example");
    QCOMPARE(patternKindOf(m->graph, *foo), PatternKind::Opaque);
    QCOMPARE(m->diagnostics.size(), size_t(1));
    QCOMPARE(m->diagnostics[0].severity, Severity::Warning);
    QCOMPARE(QString::fromStdString(m->diagnostics[0].str()),
             "node 'foo' (FooBar): op FooBar is not supported; it imports as an opaque node and "
             "fails only when run");
    // The value_info gives FooBar's output type, and inference carries it on.
    QCOMPARE(QString::fromStdString(m->graph.value(n.outputs[0]).type.str()), "f32[2,3]");
    QCOMPARE(QString::fromStdString(m->graph.value(m->graph.outputs()[0]).type.str()), "f32[2,3]");
  }

  void brokenFilesGiveOneSentence_data() {
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("expected");
    QTest::newRow("missing") << "/nonexistent/model.onnx"
                             << "/nonexistent/model.onnx: file not found";
    QTest::newRow("garbage") << QString::fromStdString(badModel("garbage"))
                             << "garbage.onnx: not a valid ONNX model (protobuf parse failed)";
    QTest::newRow("raw_data_short")
        << QString::fromStdString(badModel("raw_data_short"))
        << "initializer 'w': has 10 bytes of data but its shape needs 64";
    QTest::newRow("huge_dims") << QString::fromStdString(badModel("huge_dims"))
                               << "initializer 'w': has dimensions whose product is absurdly large";
    QTest::newRow("external_escape")
        << QString::fromStdString(badModel("external_escape"))
        << "initializer 'w': external data '../../../etc/passwd' is outside the model's folder";
    QTest::newRow("softmax11_dynamic")
        << QString::fromStdString(badModel("softmax11_dynamic"))
        << "node 'sm' (Softmax): opset-11 Softmax over axis 1 of f32[n,3,5] flattens the trailing "
           "dims, which needs a static shape; re-export the model with opset 13 or later";
    QTest::newRow("folder") << QString::fromStdString(fixturesDir().string())
                            << "fixtures: is a folder, not an ONNX model";
  }

  void brokenFilesGiveOneSentence() {
    QFETCH(QString, path);
    QFETCH(QString, expected);
    auto m = importOnnxFile(path.toStdString());
    QVERIFY(!m.isOk());
    QVERIFY2(QString::fromStdString(m.message()).endsWith(expected), m.message().c_str());
  }

  void truncatedAndEmptyBytesAreRefused() {
    std::ifstream f(std::string(FUSELENS_SOURCE_DIR) + "/samples/mlp.onnx", std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    // Every cut must fail cleanly (or, by chance, parse into something valid).
    for (size_t cut :
         {size_t(0), size_t(1), size_t(7), bytes.size() / 3, bytes.size() / 2, bytes.size() - 1}) {
      auto m = importOnnxBytes(bytes.substr(0, cut), "cut.onnx", "");
      if (!m.isOk())
        QVERIFY2(m.message().rfind("cut.onnx: not a valid ONNX model", 0) == 0 ||
                     m.message().find("'") != std::string::npos,
                 m.message().c_str());
    }
    auto empty = importOnnxBytes("", "empty.onnx", "");
    QVERIFY(!empty.isOk());
    QCOMPARE(QString::fromStdString(empty.message()),
             "empty.onnx: not a valid ONNX model (it has no graph)");
  }
};

QTEST_APPLESS_MAIN(OnnxImportTest)
#include "onnx_import_test.moc"
