// ONNX import: every fixture imports with the types ONNX Runtime produced
// (shape inference, not declared shapes, since fixture outputs declare none);
// names, opsets and symbolic dims are kept; older opsets are canonicalized;
// unknown ops import as Opaque with a warning; and broken or hostile files
// give one sentence instead of a crash.
#include <QtTest>
#include <fstream>

#include "core/eager/interpreter.h"
#include "core/onnx/import.h"
#include "core/ops/registry.h"
#include "fixture_util.h"
#include "tests/support/onnx_builder.h"
#include "tests/support/test_paths.h"

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
    // Sizes known only at run time (NonZero, a shape computed by ops, what a
    // loop or branch yields) may stay unknown; everything else is inferred.
    std::string tag = QTest::currentDataTag();
    bool runTimeSizes = tag.rfind("cf_", 0) == 0 || tag == "data_nonzero" ||
                        tag.rfind("data_constant_of_shape", 0) == 0 ||
                        tag.rfind("data_range", 0) == 0;
    for (const auto& [name, ref] : outputs) {
      auto v = m->graph.findValue(name);
      QVERIFY2(v.has_value(), name.c_str());
      // Inferred types must agree with ORT's; a symbolic dim stands for any size.
      const TensorType& t = m->graph.value(*v).type;
      bool same = t.dtype == ref.dtype &&
                  ((!t.rankKnown && runTimeSizes) || (t.rankKnown && t.rank() == ref.rank()));
      for (size_t i = 0; same && t.rankKnown && i < t.rank(); ++i)
        same = t.shape[i].isStatic() ? t.shape[i].value == ref.shape[i]
                                     : !t.shape[i].symbol.empty() || runTimeSizes;
      QVERIFY2(same, (t.str() + " vs ORT's " + ref.type().str()).c_str());
    }
    // Every node and value is its own origin after import.
    for (NodeId n : m->graph.nodeIds()) QCOMPARE(m->graph.node(n).origins, std::vector<NodeId>{n});
    for (ValueId v : m->graph.valueIds()) QCOMPARE(m->graph.value(v).origin, v);
  }

  void sampleKeepsNamesOpsetsAndProducer() {
    auto m = importOnnxFile(fuselens::test::sourcePath() + "/samples/mlp.onnx");
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

  // An input dim with neither value nor name gets a name from its input and
  // axis (never one a dim_param already uses), so it can be bound and swept.
  void unnamedInputDimsGetNames() {
    onnx::ModelProto m = test::oneNodeModel("Relu", {"x.in"}, {1, 3, 8});
    auto* dims = m.mutable_graph()
                     ->mutable_input(0)
                     ->mutable_type()
                     ->mutable_tensor_type()
                     ->mutable_shape()
                     ->mutable_dim();
    dims->Mutable(0)->set_dim_param("x_in_1");
    dims->Mutable(1)->clear_dim_value();
    dims->Mutable(2)->clear_dim_value();
    auto g = importOnnxBytes(test::bytesOf(m), "unnamed.onnx", "");
    QVERIFY2(g.isOk(), g.message().c_str());
    QCOMPARE(QString::fromStdString(g->graph.value(g->graph.inputs()[0]).type.str()),
             "f32[x_in_1,x_in_1_,x_in_2]");
    QCOMPARE(QString::fromStdString(g->graph.value(g->graph.outputs()[0]).type.str()),
             "f32[x_in_1,x_in_1_,x_in_2]");
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
             "node 'foo' (FooBar, com.example opset 1): op FooBar is not supported; it imports as "
             "an opaque node and "
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
        << "node 'sm' (Softmax, opset 11): opset-11 Softmax over axis 1 of f32[n,3,5] flattens the "
           "trailing "
           "dims, which needs a static shape; re-export the model with opset 13 or later";
    QTest::newRow("if_untyped_input")
        << QString::fromStdString(badModel("if_untyped_input"))
        << "graph input 'z' is declared without a type and its type cannot be taken from the node "
           "that owns the graph";
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

  // Each opset form imports as the latest opset's: no node keeps an attribute
  // that later opsets moved into an input.
  void everyFixtureIsInCanonicalForm() {
    const std::map<std::string, std::vector<std::string>> moved = {
        {"ReduceSum", {"axes"}},
        {"ReduceMean", {"axes"}},
        {"ReduceMax", {"axes"}},
        {"ReduceMin", {"axes"}},
        {"ReduceProd", {"axes"}},
        {"ReduceL1", {"axes"}},
        {"ReduceL2", {"axes"}},
        {"ReduceSumSquare", {"axes"}},
        {"ReduceLogSum", {"axes"}},
        {"ReduceLogSumExp", {"axes"}},
        {"Squeeze", {"axes"}},
        {"Unsqueeze", {"axes"}},
        {"Split", {"split"}},
        {"Pad", {"pads", "value"}},
        {"Clip", {"min", "max"}},
        {"Slice", {"starts", "ends", "axes"}},
        {"TopK", {"k"}},
        {"BatchNormalization", {"spatial"}}};
    int checked = 0;
    for (const auto& c : fixtureCases()) {
      auto m = importOnnxFile(c.model.string());
      QVERIFY2(m.isOk(), (c.name + ": " + m.message()).c_str());
      for (NodeId id : m->graph.nodeIds()) {
        const Node& n = m->graph.node(id);
        QVERIFY2(n.op != "Upsample", (c.name + ": Upsample was not rewritten to Resize").c_str());
        auto it = moved.find(n.op);
        if (it == moved.end()) continue;
        ++checked;
        for (const auto& a : it->second)
          QVERIFY2(!n.attrs.has(a), (c.name + ": " + n.op + " kept attribute " + a).c_str());
      }
    }
    QVERIFY(checked > 40);
  }

  void clipAndSqueezeAttributesBecomeInputs() {
    auto clip = importOnnxFile(fixtureModel("ew_clip_attrs_opset6"));
    QVERIFY2(clip.isOk(), clip.message().c_str());
    const Node& n = clip->graph.node(*clip->graph.findNode("clip"));
    QCOMPARE(n.inputs.size(), size_t(3));
    QCOMPARE(clip->graph.value(n.inputs[1]).constant->at(0), -0.5);
    QCOMPARE(clip->graph.value(n.inputs[2]).constant->at(0), 1.0);
    auto sq = importOnnxFile(fixtureModel("data_squeeze_attr11"));
    QVERIFY2(sq.isOk(), sq.message().c_str());
    const Node& s = sq->graph.node(sq->graph.nodeIds()[0]);
    QCOMPARE(s.inputs.size(), size_t(2));
    QCOMPARE(sq->graph.value(s.inputs[1]).constant->numel(), int64_t(2));
    QCOMPARE(QString::fromStdString(sq->graph.value(s.outputs[0]).type.str()), "f32[2,4]");
  }

  // Outer-scope names a body reads become inputs of the If node (listed in
  // implicit_inputs) and inputs of the body; a nested body's read of the
  // outermost graph passes through every graph in between.
  void outerScopeNamesBecomeImplicitInputs() {
    auto m = importOnnxFile(fixtureModel("cf_if_nested"));
    QVERIFY2(m.isOk(), m.message().c_str());
    const Graph& g = m->graph;
    QCOMPARE(g.nodeCount(), size_t(1));
    const Node& outer = g.node(g.nodeIds()[0]);
    auto implicit = std::get<std::vector<std::string>>(*outer.attrs.find("implicit_inputs"));
    std::sort(implicit.begin(), implicit.end());
    QCOMPARE(implicit, (std::vector<std::string>{"c2", "w", "x"}));
    QCOMPARE(outer.inputs.size(), size_t(4));  // the condition, then the three outer values
    for (size_t i = 1; i < 4; ++i) QVERIFY(g.value(outer.inputs[i]).users.size() == 1);
    auto then = std::get<std::shared_ptr<const Graph>>(*outer.attrs.find("then_branch"));
    QCOMPARE(then->inputs().size(), size_t(3));  // c2, x and w, for the inner If
    const Node& inner = then->node(then->nodeIds()[0]);
    QCOMPARE(QString::fromStdString(inner.op), "If");
    QCOMPARE(inner.inputs.size(), size_t(3));  // c2, then x and w
    QCOMPARE(patternKindOf(g, outer.id), PatternKind::Opaque);
  }

  void controlFlowErrorsAreOneSentence() {
    // An If whose branches disagree on the element type of an output.
    Graph g;
    ValueId c = g.addInput("c", TensorType::of(DType::Bool, {}));
    auto branch = [](DType t) {
      auto b = std::make_shared<Graph>();
      auto data = std::make_shared<TensorData>(t, std::vector<int64_t>{2});
      b->addOutput(b->addConstant("k", data));
      return std::shared_ptr<const Graph>(b);
    };
    Attributes attrs;
    attrs.set("then_branch", branch(DType::F32));
    attrs.set("else_branch", branch(DType::I64));
    TensorType unknown;
    unknown.rankKnown = false;
    NodeId n = g.addNode("If", {c}, {{"y", unknown}}, attrs, "branchy");
    Status s = inferNodeTypes(g, n);
    QVERIFY(!s.isOk());
    QCOMPARE(QString::fromStdString(s.message()),
             "node 'branchy' (If): output 0 is f32 in one branch and i64 in the other");
    Node& bad = g.mutableNode(n);
    bad.attrs.erase("else_branch");
    g.addOutput(bad.outputs[0]);
    auto cond = TensorData::fromVector(DType::Bool, {}, std::vector<uint8_t>{0});
    auto r = runEager(g, {{"c", cond}});
    QVERIFY(!r.isOk());
    QCOMPARE(QString::fromStdString(r.message()), "node 'branchy' (If): has no else_branch graph");
  }

  void truncatedAndEmptyBytesAreRefused() {
    std::ifstream f(fuselens::test::sourcePath() + "/samples/mlp.onnx", std::ios::binary);
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
