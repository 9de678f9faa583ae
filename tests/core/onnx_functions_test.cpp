// Model-local functions: every call is inlined at import, its ops named in a
// scope of the call's own ("/encoder/block.0/fc:LinearAct/MatMul"), attribute
// references resolved from the call, calls nested in functions and in
// subgraphs inlined too; bad functions are one sentence, and so are functions
// nested too deep or growing past a million nodes once inlined. The fixture
// tests/fixtures/fn_local_calls (make_function_fixtures.py) is also run
// against ONNX Runtime by eager_test, as every fixture is.
#include <QtTest>

#include "core/eager/interpreter.h"
#include "core/onnx/import.h"
#include "tests/support/onnx_builder.h"
#include "tests/support/test_paths.h"

using namespace fuselens;
using namespace fuselens::test;

namespace {

onnx::NodeProto node(const std::string& op, std::vector<std::string> ins,
                     std::vector<std::string> outs, const std::string& name = {},
                     const std::string& domain = {}) {
  onnx::NodeProto n;
  n.set_op_type(op);
  n.set_name(name);
  n.set_domain(domain);
  for (const auto& i : ins) n.add_input(i);
  for (const auto& o : outs) n.add_output(o);
  return n;
}

onnx::FunctionProto function(const std::string& name, std::vector<onnx::NodeProto> nodes,
                             std::vector<std::string> attrs = {}, int opset = 17) {
  onnx::FunctionProto f;
  f.set_domain("local");
  f.set_name(name);
  f.add_input("X");
  f.add_output("Y");
  for (auto& n : nodes) *f.add_node() = std::move(n);
  for (const auto& a : attrs) f.add_attribute(a);
  auto* op = f.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  op = f.add_opset_import();
  op->set_domain("local");
  op->set_version(1);
  return f;
}

// y = call(x), x f32[2,3], with `fns` as the model's local functions.
onnx::ModelProto callModel(std::vector<onnx::FunctionProto> fns, onnx::NodeProto call) {
  onnx::ModelProto m = oneNodeModel("Relu", {"x"}, {2, 3});
  auto* local = m.add_opset_import();
  local->set_domain("local");
  local->set_version(1);
  *m.mutable_graph()->mutable_node(0) = std::move(call);
  for (auto& f : fns) *m.add_functions() = std::move(f);
  return m;
}

onnx::FunctionProto twice() { return function("Twice", {node("Mul", {"X", "X"}, {"Y"})}); }

onnx::AttributeProto refAttr(const std::string& name, const std::string& ref) {
  onnx::AttributeProto a = namedAttr(name, onnx::AttributeProto::FLOAT);
  a.set_ref_attr_name(ref);
  return a;
}

Expected<ImportedModel> importModel(const onnx::ModelProto& m) {
  return importOnnxBytes(bytesOf(m), "bad.onnx", ".");
}

std::vector<std::string> opNames(const Graph& g) {
  std::vector<std::string> names;
  for (NodeId n : g.nodeIds()) names.push_back(g.node(n).name);
  return names;
}

}  // namespace

class OnnxFunctionsTest : public QObject {
  Q_OBJECT

 private slots:
  void callsInlineIntoScopesOfTheirOwn() {
    auto m = importOnnxFile(sourcePath() + "/tests/fixtures/fn_local_calls/model.onnx");
    QVERIFY2(m.isOk(), m.message().c_str());
    const std::vector<std::string> names = opNames(m->graph);
    for (const char* expected : {
             "/encoder/block.0/fc:LinearAct/MatMul",
             "/encoder/block.0/fc:LinearAct/LeakyRelu",
             "/encoder/block.0/fc:LinearAct/scale:Scale/Mul",  // a call inside a function
             "/encoder/block.1/fc:LinearAct/MatMul",
             "Scale_0/Mul",  // an unnamed call
             "/head/Relu",
         })
      QVERIFY2(std::count(names.begin(), names.end(), expected) == 1, expected);
    for (NodeId n : m->graph.nodeIds()) QVERIFY(m->graph.node(n).domain.empty());
    // Each call's attributes reach its own copy of the body.
    auto alpha = [&](const char* name) {
      return m->graph.node(*m->graph.findNode(name)).attrs.getFloat("alpha", -1);
    };
    QCOMPARE(alpha("/encoder/block.0/fc:LinearAct/LeakyRelu"), double(0.1f));
    QCOMPARE(alpha("/encoder/block.1/fc:LinearAct/LeakyRelu"), double(0.2f));
    // Values inside a call are the call's own; the call's outputs keep their names.
    QVERIFY(m->graph.findValue("/encoder/block.0/fc:LinearAct/t").has_value());
    QVERIFY(m->graph.findValue("/encoder/block.1/fc:LinearAct/t").has_value());
    QVERIFY(m->graph.findValue("h0").has_value());
  }

  void declaredAttributeNotGivenIsAbsent() {
    onnx::NodeProto act = node("LeakyRelu", {"X"}, {"Y"}, "act");
    *act.add_attribute() = refAttr("alpha", "slope");
    auto m = importModel(
        callModel({function("Act", {act}, {"slope"})}, node("Act", {"x"}, {"y"}, "a", "local")));
    QVERIFY2(m.isOk(), m.message().c_str());
    QVERIFY(!m->graph.node(*m->graph.findNode("a:Act/act")).attrs.has("alpha"));
  }

  void callsInsideSubgraphsInline() {
    auto branch = [](const std::string& name) {
      onnx::GraphProto g;
      g.set_name(name);
      *g.add_node() = node("Twice", {"x"}, {name + "_y"}, name + "_call", "local");
      declareF32(g.add_output(), name + "_y", {2, 3});
      return g;
    };
    onnx::NodeProto iff = node("If", {"c"}, {"y"}, "if");
    auto* then = iff.add_attribute();
    *then = namedAttr("then_branch", onnx::AttributeProto::GRAPH);
    *then->mutable_g() = branch("then");
    auto* otherwise = iff.add_attribute();
    *otherwise = namedAttr("else_branch", onnx::AttributeProto::GRAPH);
    *otherwise->mutable_g() = branch("else");
    onnx::ModelProto model = callModel({twice()}, iff);
    auto* c = model.mutable_graph()->add_input();
    c->set_name("c");
    c->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::BOOL);
    c->mutable_type()->mutable_tensor_type()->mutable_shape();
    auto m = importModel(model);
    QVERIFY2(m.isOk(), m.message().c_str());
    const Node& ifNode = m->graph.node(*m->graph.findNode("if"));
    auto body = std::get<std::shared_ptr<const Graph>>(*ifNode.attrs.find("then_branch"));
    QCOMPARE(opNames(*body), std::vector<std::string>{"then_call:Twice/Mul_0"});

    std::map<std::string, TensorData> in;
    in.emplace("c", TensorData::fromVector(DType::Bool, {}, std::vector<uint8_t>{1}));
    in.emplace("x",
               TensorData::fromVector(DType::F32, {2, 3}, std::vector<float>{1, 2, 3, 4, 5, 6}));
    auto r = runEager(m->graph, in);
    QVERIFY2(r.isOk(), r.message().c_str());
    const TensorData* y = r->find(m->graph.outputs()[0]);
    QVERIFY(y);
    QCOMPARE(y->at(5), 36.0);
  }

  void badFunctionsAreOneSentence_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("expected");
    auto row = [](const char* name, const onnx::ModelProto& m, const char* expected) {
      QTest::newRow(name) << QByteArray::fromStdString(bytesOf(m)) << expected;
    };
    row("unknown function", callModel({twice()}, node("Thrice", {"x"}, {"y"}, "t", "local")),
        "node 't' (Thrice): calls function local.Thrice, which the model does not define");
    row("recursion",
        callModel({function("A", {node("B", {"X"}, {"Y"}, "", "local")}),
                   function("B", {node("A", {"X"}, {"Y"}, "", "local")})},
                  node("A", {"x"}, {"y"}, "call", "local")),
        "node 'call:A/B_0/A_0' (A): function local.A calls itself (local.A -> local.B -> "
        "local.A), so it cannot be inlined");
    onnx::NodeProto act = node("LeakyRelu", {"X"}, {"Y"}, "act");
    *act.add_attribute() = refAttr("alpha", "slope");
    row("undeclared attribute",
        callModel({function("Act", {act})}, node("Act", {"x"}, {"y"}, "a", "local")),
        "node 'a' (Act): node 'a:Act/act' of function local.Act takes attribute 'alpha' from "
        "'slope', which the call does not give and the function does not declare");
    onnx::NodeProto scaled = node("LeakyRelu", {"X"}, {"Y"}, "act");
    *scaled.add_attribute() = refAttr("alpha", "slope");
    onnx::NodeProto intCall = node("Act", {"x"}, {"y"}, "a", "local");
    *intCall.add_attribute() = intAttr("slope", 2);
    row("attribute of another kind", callModel({function("Act", {scaled}, {"slope"})}, intCall),
        "node 'a' (Act): node 'a:Act/act' of function local.Act takes attribute 'alpha' (FLOAT) "
        "from 'slope', but the call gives INT");
    row("too many inputs", callModel({twice()}, node("Twice", {"x", "x"}, {"y"}, "t", "local")),
        "node 't' (Twice): the call passes 2 inputs and 1 outputs, but function local.Twice "
        "takes 1 and 1");
    row("another opset",
        callModel({function("Old", {node("Relu", {"X"}, {"Y"})}, {}, 13)},
                  node("Old", {"x"}, {"y"}, "o", "local")),
        "bad.onnx: function local.Old imports opset 13 of the default domain but the model "
        "imports opset 17; FuseLens reads both at one opset");
    std::vector<onnx::FunctionProto> chain, doubling;
    for (int i = 0; i < 70; ++i) {
      const std::string next = "F" + std::to_string(i + 1);
      chain.push_back(
          function("F" + std::to_string(i),
                   {i == 69 ? node("Relu", {"X"}, {"Y"}) : node(next, {"X"}, {"Y"}, "", "local")}));
    }
    row("calls nest too deep", callModel(chain, node("F0", {"x"}, {"y"}, "f", "local")),
        "bad.onnx: functions call functions more than 64 deep; FuseLens inlines no deeper");
    for (int i = 0; i < 21; ++i) {  // each level calls the next twice: 2^21 nodes
      const std::string next = "D" + std::to_string(i + 1);
      doubling.push_back(function("D" + std::to_string(i),
                                  i == 20 ? std::vector{node("Relu", {"X"}, {"Y"})}
                                          : std::vector{node(next, {"X"}, {"T"}, "", "local"),
                                                        node(next, {"T"}, {"Y"}, "", "local")}));
    }
    row("too many nodes", callModel(doubling, node("D0", {"x"}, {"y"}, "d", "local")),
        "bad.onnx: inlining the model's functions would make more than 1000000 nodes");
    row("defined twice", callModel({twice(), twice()}, node("Twice", {"x"}, {"y"}, "t", "local")),
        "bad.onnx: function local.Twice is defined more than once");
  }

  void badFunctionsAreOneSentence() {
    QFETCH(QByteArray, bytes);
    QFETCH(QString, expected);
    auto m = importOnnxBytes(bytes.toStdString(), "bad.onnx", ".");
    QVERIFY(!m.isOk());
    QCOMPARE(QString::fromStdString(m.message()), expected);
  }
};

QTEST_GUILESS_MAIN(OnnxFunctionsTest)
#include "onnx_functions_test.moc"
