// The importer refuses models it cannot read faithfully, each in one sentence
// naming the file and, for a node, the node, its op, the attribute and the
// expected and found kinds: an IR version of 0 or newer than ONNX has, no
// default-domain opset or one newer than FuseLens knows, and an attribute of
// another kind than the op's schema. Real IR versions and opsets still import.
// Models are built here with the ONNX protobuf API (tests/support/onnx_builder.h).
#include <QtTest>

#include "core/onnx/import.h"
#include "core/ops/registry.h"
#include "tests/support/onnx_builder.h"

using namespace fuselens;
using namespace fuselens::test;

namespace {

Expected<ImportedModel> importModel(const onnx::ModelProto& m) {
  return importOnnxBytes(bytesOf(m), "bad.onnx", ".");
}

onnx::ModelProto relu() { return oneNodeModel("Relu", {"x"}, {2, 3}); }

}  // namespace

class OnnxRefuseTest : public QObject {
  Q_OBJECT
 private slots:
  void versionsOutsideWhatFuseLensKnowsAreRefused_data() {
    QTest::addColumn<int>("irVersion");
    QTest::addColumn<int>("opset");  // -1: no default-domain opset_import
    QTest::addColumn<QString>("expected");
    QTest::newRow("ir 0") << 0 << 17
                          << "bad.onnx: the model has no IR version (ir_version is 0 or unset); "
                             "FuseLens reads IR versions 1 to 14";
    QTest::newRow("ir 15") << 15 << 17
                           << "bad.onnx: IR version 15 is not one FuseLens knows; FuseLens "
                              "reads IR versions 1 to 14";
    QTest::newRow("no default opset")
        << 8 << -1
        << "bad.onnx: the model imports no opset for the default ONNX domain, so its ops have no "
           "defined meaning; FuseLens reads opsets 1 to 21";
    QTest::newRow("opset 22") << 8 << 22
                              << "bad.onnx: default-domain opset 22 is newer than FuseLens knows; "
                                 "FuseLens reads opsets 1 to 21";
  }
  void versionsOutsideWhatFuseLensKnowsAreRefused() {
    QFETCH(int, irVersion);
    QFETCH(int, opset);
    QFETCH(QString, expected);
    onnx::ModelProto m = relu();
    m.set_ir_version(irVersion);
    if (opset < 0)
      m.mutable_opset_import(0)->set_domain("com.example");
    else
      m.mutable_opset_import(0)->set_version(opset);
    auto r = importModel(m);
    QVERIFY(!r.isOk());
    QCOMPARE(QString::fromStdString(r.message()), expected);
  }

  void everyRealVersionImports_data() {
    QTest::addColumn<int>("irVersion");
    QTest::addColumn<int>("opset");
    for (int ir = 3; ir <= 13; ++ir) QTest::addRow("ir %d", ir) << ir << 13;
    QTest::newRow("ir 1, opset implied") << 1 << -1;
    QTest::newRow("opset 1") << 8 << 1;
    QTest::newRow("opset 21") << 10 << 21;
  }
  void everyRealVersionImports() {
    QFETCH(int, irVersion);
    QFETCH(int, opset);
    onnx::ModelProto m = relu();
    m.set_ir_version(irVersion);
    if (opset < 0)
      m.clear_opset_import();
    else
      m.mutable_opset_import(0)->set_version(opset);
    auto r = importModel(m);
    QVERIFY2(r.isOk(), r.message().c_str());
  }

  void attributeOfWrongKindIsOneSentence_data() {
    QTest::addColumn<QString>("op");
    QTest::addColumn<int>("inputs");
    QTest::addColumn<QString>("attr");  // "name=KIND"
    QTest::addColumn<QString>("expected");
    auto row = [](const char* name, const char* op, int inputs, const char* attr,
                  const char* expected) {
      QTest::newRow(name) << op << inputs << attr << expected;
    };
    row("string for int", "Conv", 2, "group=STRING",
        "bad.onnx, node 'n1' (Conv, opset 17): attribute 'group' must be an INT, but the model "
        "gives a STRING");
    row("ints for int", "Softmax", 1, "axis=INTS",
        "bad.onnx, node 'n1' (Softmax, opset 17): attribute 'axis' must be an INT, but the model "
        "gives an INTS");
    row("int for float", "Gemm", 2, "alpha=INT",
        "bad.onnx, node 'n1' (Gemm, opset 17): attribute 'alpha' must be a FLOAT, but the model "
        "gives an INT");
    row("float for int", "Concat", 2, "axis=FLOAT",
        "bad.onnx, node 'n1' (Concat, opset 17): attribute 'axis' must be an INT, but the model "
        "gives a FLOAT");
    row("int for ints", "Transpose", 1, "perm=INT",
        "bad.onnx, node 'n1' (Transpose, opset 17): attribute 'perm' must be an INTS, but the "
        "model gives an INT");
    row("int for string", "MaxPool", 1, "auto_pad=INT",
        "bad.onnx, node 'n1' (MaxPool, opset 17): attribute 'auto_pad' must be a STRING, but the "
        "model gives an INT");
    row("string for float", "LayerNormalization", 3, "epsilon=STRING",
        "bad.onnx, node 'n1' (LayerNormalization, opset 17): attribute 'epsilon' must be a FLOAT, "
        "but the model gives a STRING");
  }
  void attributeOfWrongKindIsOneSentence() {
    QFETCH(QString, op);
    QFETCH(int, inputs);
    QFETCH(QString, attr);
    QFETCH(QString, expected);
    std::vector<std::string> names;
    for (int i = 0; i < inputs; ++i) names.push_back("x" + std::to_string(i));
    QStringList parts = attr.split('=');
    auto m = oneNodeModel(op.toStdString(), names, {2, 3}, {wrongAttr(parts[0], parts[1])});
    auto r = importModel(m);
    QVERIFY(!r.isOk());
    QCOMPARE(QString::fromStdString(r.message()), expected);
  }

  // Every attribute of every op in the schema, given a kind it does not have,
  // is refused naming that attribute, and nothing crashes on the way.
  void everySchemaAttributeIsChecked() {
    int checked = 0;
    for (const OpInfo* info : OpRegistry::instance().all()) {
      if (!info->domain.empty()) continue;
      QVERIFY2(info->attrs, qPrintable(QString::fromStdString(info->name) +
                                       " has no row in core/ops/attr_schema.cpp"));
      for (const AttrSpec& spec : *info->attrs) {
        const char* wrong = spec.kind == AttrKind::String ? "INT" : "STRING";
        auto m = oneNodeModel(info->name, {"x0"}, {2, 3},
                              {wrongAttr(QString::fromStdString(spec.name), wrong)});
        auto r = importModel(m);
        QVERIFY2(!r.isOk(), qPrintable(QString::fromStdString(info->name + "." + spec.name)));
        QVERIFY2(r.message().find("attribute '" + spec.name + "' must be") != std::string::npos,
                 r.message().c_str());
        ++checked;
      }
    }
    QVERIFY(checked > 150);
  }

  void wrongKindInsideASubgraphIsRefused() {
    onnx::ModelProto body = oneNodeModel("Softmax", {"x0"}, {2, 3}, {stringAttr("axis", "1")});
    onnx::ModelProto m = oneNodeModel("If", {"c"}, {}, {});
    onnx::AttributeProto then = namedAttr("then_branch", onnx::AttributeProto::GRAPH);
    *then.mutable_g() = body.graph();
    then.mutable_g()->clear_input();  // x0 comes from the outer graph
    onnx::AttributeProto otherwise = then;
    otherwise.set_name("else_branch");
    *m.mutable_graph()->mutable_node(0)->add_attribute() = then;
    *m.mutable_graph()->mutable_node(0)->add_attribute() = otherwise;
    declareF32(m.mutable_graph()->add_input(), "x0", {2, 3});
    auto r = importModel(m);
    QVERIFY(!r.isOk());
    QCOMPARE(QString::fromStdString(r.message()),
             "bad.onnx, node 'n1' (Softmax, opset 17): attribute 'axis' must be an INT, but the "
             "model gives a STRING");
  }

 private:
  static onnx::AttributeProto wrongAttr(const QString& name, const QString& kind) {
    std::string n = name.toStdString();
    if (kind == "STRING") return stringAttr(n, "1");
    if (kind == "INTS") return intsAttr(n, {1});
    if (kind == "FLOAT") return floatAttr(n, 1.0f);
    return intAttr(n, 1);
  }
};

QTEST_APPLESS_MAIN(OnnxRefuseTest)
#include "onnx_refuse_test.moc"
