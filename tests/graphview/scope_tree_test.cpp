// The scope hierarchy: scopes from op names, fused groups in the deepest
// common scope, chunks where names carry no scope, the initial collapse to
// about 200 boxes, and the aggregates a collapsed box shows.
#include "session/graphview/scope_tree.h"

#include <QtTest>

#include "core/onnx/import.h"
#include "passes/fusion_decision.h"
#include "scoped_models.h"
#include "session/graphview/scoped_layout.h"
#include "tests/support/test_paths.h"

using namespace fuselens;
using namespace fuselens::graphview;

namespace {

// A Fused node whose body ops are named `names`, in a chain; its output feeds a Relu.
Graph groupAcross(const std::vector<std::string>& names) {
  auto body = std::make_shared<Graph>();
  ValueId a = body->addInput("a0", test::f32Row());
  for (size_t i = 0; i < names.size(); ++i) {
    NodeId n =
        body->addNode("Relu", {a}, {{"b" + std::to_string(i), test::f32Row()}}, {}, names[i]);
    a = body->node(n).outputs[0];
  }
  body->addOutput(a);
  Graph g;
  ValueId x = g.addInput("x", test::f32Row());
  Attributes attrs;
  attrs.set("group", int64_t{0});
  attrs.set("kind", std::string("ElemWise"));
  NodeId f = g.addNode(kFusedOp, {x}, {{"y", test::f32Row()}}, attrs, "fused_0");
  g.mutableNode(f).domain = kFuseLensDomain;
  g.mutableNode(f).body = body;
  NodeId r = g.addNode("Relu", {g.node(f).outputs[0]}, {{"z", test::f32Row()}}, {}, "/head/Relu");
  g.addOutput(g.node(r).outputs[0]);
  return g;
}

}  // namespace

class ScopeTreeTest : public QObject {
  Q_OBJECT

 private slots:
  void scopesFromNames_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<QStringList>("scopes");
    QTest::newRow("torch style") << "/encoder/layer.3/attention/self/MatMul"
                                 << QStringList{"encoder", "layer.3", "attention", "self"};
    QTest::newRow("no leading slash") << "a/b/c" << QStringList{"a", "b"};
    QTest::newRow("unscoped") << "MatMul_12" << QStringList{};
    QTest::newRow("empty") << "" << QStringList{};
    QTest::newRow("doubled slashes") << "//x//y" << QStringList{"x"};
  }
  void scopesFromNames() {
    QFETCH(QString, name);
    QFETCH(QStringList, scopes);
    QStringList got;
    for (const std::string& s : scopeOfName(name.toStdString())) got << QString::fromStdString(s);
    QCOMPARE(got, scopes);
  }

  void opsSitInTheirDeepestScope() {
    ScopeTree tree(flattenGraph(test::encoderStack(2)));
    auto self = tree.find("/encoder/layer.1/attention/self");
    QVERIFY(self.has_value());
    QCOMPARE(tree.scope(*self).units.size(), size_t(6));
    QCOMPARE(tree.scope(*self).depth, 4);
    QVERIFY(tree.contains(*tree.find("/encoder"), *self));
    QVERIFY(!tree.contains(*self, *tree.find("/encoder")));
    QCOMPARE(tree.scope(tree.root()).children.size(), size_t(3));  // embeddings, encoder, pooler
    // Children follow the topological order of their first op.
    QCOMPARE(tree.scope(tree.scope(tree.root()).children[0]).path, std::string("/embeddings"));
    QCOMPARE(tree.scope(tree.scope(tree.root()).children[2]).path, std::string("/pooler"));
  }

  void groupNestsInDeepestCommonScope() {
    ScopeTree tree(flattenGraph(
        groupAcross({"/enc/l0/attn/Relu_a", "/enc/l0/ffn/Relu_b", "/enc/l0/ffn/Relu_c"})));
    auto l0 = tree.find("/enc/l0");
    QVERIFY(l0.has_value());
    bool found = false;
    for (int u : tree.scope(*l0).units)
      if (tree.units()[size_t(u)].group >= 0) {
        found = true;
        QCOMPARE(tree.units()[size_t(u)].nodes.size(), size_t(3));
      }
    QVERIFY(found);
    // Its members' own scopes are not made: nothing else lives there.
    QVERIFY(!tree.find("/enc/l0/ffn").has_value());
  }

  // A group's scope is the common prefix of its members' scopes, however the
  // names are written (the shared text of the names is a shortcut to it).
  void groupScopeIsItsMembersCommonScope_data() {
    QTest::addColumn<QStringList>("names");
    QTest::addColumn<QString>("scope");
    QTest::newRow("siblings") << QStringList{"/a/b/X", "/a/c/Y"} << "/a";
    QTest::newRow("shared text, other scope") << QStringList{"/a/b/X", "/a/bc/Y"} << "/a";
    QTest::newRow("one is the other's scope") << QStringList{"/a/b", "/a/b/X"} << "/a";
    QTest::newRow("same scope") << QStringList{"/a/b/X", "/a/b/Y"} << "/a/b";
    QTest::newRow("leading slash on one") << QStringList{"a/b/X", "/a/b/Y"} << "/a/b";
    QTest::newRow("doubled slash inside") << QStringList{"/a//b/X", "/a/b/Y"} << "/a/b";
    QTest::newRow("doubled slash where they part") << QStringList{"/a/b/X", "/a/b//Y"} << "/a/b";
    QTest::newRow("unscoped") << QStringList{"X", "Y"} << "";
  }
  void groupScopeIsItsMembersCommonScope() {
    QFETCH(QStringList, names);
    QFETCH(QString, scope);
    std::vector<std::string> members;
    for (const QString& n : names) members.push_back(n.toStdString());
    ScopeTree tree(flattenGraph(groupAcross(members)));
    bool found = false;
    for (const ScopeUnit& u : tree.units())
      if (u.group >= 0) {
        found = true;
        QCOMPARE(QString::fromStdString(tree.scope(u.scope).path), scope);
      }
    QVERIFY(found);
  }

  void longUnscopedChainStillCollapses() {
    ScopeTree tree(flattenGraph(test::unscopedChain(20000)));
    const Scope& root = tree.scope(tree.root());
    QVERIFY(root.children.size() <= ScopeTree::kChunk);
    QVERIFY(root.children.size() > 1);
    QCOMPARE(root.units.size(), size_t(2));  // the input and the output
    // Chunks are named by their first and last ops, chunks of scopes by the scopes.
    QCOMPARE(tree.scope(root.children[0]).name, std::string("Relu_0 .. Relu_1599"));
    QVERIFY(tree.scope(root.children[0]).chunk);
    ScopeTree stack(flattenGraph(test::encoderStack(100)));
    const Scope& encoder = stack.scope(*stack.find("/encoder"));
    QCOMPARE(encoder.children.size(), size_t(3));
    QCOMPARE(stack.scope(encoder.children[0]).name, std::string("layer.0 .. layer.39"));
    // A named scope moved into a chunk keeps its path.
    QVERIFY(stack.find("/encoder/layer.57").has_value());
    QCOMPARE(stack.chain(*stack.find("/encoder/layer.57")).size(), size_t(4));
    const Expansion e = initialExpansion(tree);
    const size_t boxes = visibleBoxes(tree, e);
    QVERIFY2(boxes <= 200 && boxes >= 20, qPrintable(QString::number(boxes)));
    // Every op is in exactly one scope.
    size_t units = 0;
    for (const Scope& s : tree.scopes()) units += s.units.size();
    QCOMPARE(units, tree.units().size());
  }

  void initialCollapseIsBounded_data() {
    QTest::addColumn<int>("layers");
    QTest::newRow("2 layers, all open") << 2;
    QTest::newRow("12 layers") << 12;
    QTest::newRow("700 layers") << 700;
  }
  void initialCollapseIsBounded() {
    QFETCH(int, layers);
    ScopeTree tree(flattenGraph(test::encoderStack(layers)));
    const Expansion e = initialExpansion(tree);
    const size_t boxes = visibleBoxes(tree, e);
    QVERIFY2(boxes <= 200, qPrintable(QString::number(boxes)));
    if (layers == 2) QCOMPARE(boxes, tree.flat().nodes.size());  // small: nothing collapsed
  }

  void revealAndDepth() {
    ScopeTree tree(flattenGraph(test::encoderStack(3)));
    Expansion e;
    const ScopeId self = *tree.find("/encoder/layer.2/attention/self");
    reveal(tree, self, e);
    QVERIFY(e.open.count("/encoder/layer.2/attention") == 1);
    QVERIFY(e.open.count("/encoder/layer.2/attention/self") == 0);
    reveal(tree, self, e, true);
    QVERIFY(e.open.count("/encoder/layer.2/attention/self") == 1);
    const Expansion d1 = expandToDepth(tree, 1);
    QVERIFY(d1.open.count("/encoder") == 1);
    QVERIFY(d1.open.count("/encoder/layer.0") == 0);
  }

  void aggregates() {
    ScopeTree tree(flattenGraph(test::encoderStack(2)));
    FusionDecision rejected;
    rejected.accepted = false;
    rejected.consumerName =
        tree.flat().nodes[size_t(tree.nodeNamed("/encoder/layer.1/output/Add_27"))].name;
    std::map<std::string, double> heat = {{"t28", 0.7}};
    const std::vector<ScopeStats> stats = scopeStats(tree, {rejected}, heat);
    const ScopeStats& root = stats[0];
    QCOMPARE(root.ops, size_t(2 + 2 * 13 + 1));
    QCOMPARE(root.rejected, size_t(1));
    QCOMPARE(root.worstHeat, 0.7);
    const ScopeStats& l0 = stats[size_t(tree.find("/encoder/layer.0")->index)];
    QCOMPARE(l0.ops, size_t(13));
    QCOMPARE(l0.rejected, size_t(0));
    QCOMPARE(l0.worstHeat, -1.0);
    QCOMPARE(stats[size_t(tree.find("/encoder/layer.1")->index)].rejected, size_t(1));
    QCOMPARE(root.seconds, -1.0);  // no profile: no time badge
  }

  // A profile's kernel times land on the scope where each kernel's first
  // output is made and sum up the tree; the collapsed box says them.
  void kernelTimesSumUp() {
    ScopeTree tree(flattenGraph(test::encoderStack(2)));
    std::map<std::string, double> seconds;
    double layer0 = 0;
    for (const LayoutNode& n : tree.flat().nodes)
      if (n.kind == LayoutNodeKind::Op && !n.outputs.empty() &&
          n.name.rfind("/encoder/layer.0/", 0) == 0)
        seconds[n.outputs[0]] = 1e-3, layer0 += 1e-3;
    QVERIFY(layer0 > 0);
    seconds["t28"] = 0.25;
    const std::vector<ScopeStats> stats = scopeStats(tree, {}, {}, seconds);
    QVERIFY(qFuzzyCompare(stats[size_t(tree.find("/encoder/layer.0")->index)].seconds, layer0));
    QVERIFY(qFuzzyCompare(stats[0].seconds, layer0 + 0.25));
    SceneScope box;
    box.name = "layer.0";
    box.stats.ops = 13;
    box.stats.seconds = 0.00307;
    QVERIFY(collapsedLines(box).back().find("3.07 ms") != std::string::npos);
    box.stats.seconds = 0.000412;
    QVERIFY(collapsedLines(box).back().find("412 us") != std::string::npos);
  }

  // A model-local function's calls, inlined at import, are one scope each,
  // nested in the call node's own name scope (a call inside a function too).
  void localFunctionCallsAreScopes() {
    auto m = importOnnxFile(test::sourcePath() + "/tests/fixtures/fn_local_calls/model.onnx");
    QVERIFY2(m.isOk(), m.message().c_str());
    ScopeTree tree(flattenGraph(m->graph));
    for (const char* path : {"/encoder/block.0/fc:LinearAct", "/encoder/block.1/fc:LinearAct",
                             "/encoder/block.0/fc:LinearAct/scale:Scale", "/Scale_0"})
      QVERIFY2(tree.find(path).has_value(), path);
    const Scope& call = tree.scope(*tree.find("/encoder/block.0/fc:LinearAct"));
    QCOMPARE(call.name, std::string("fc:LinearAct"));
    QCOMPARE(tree.scope(call.parent).path, std::string("/encoder/block.0"));
    const int matmul = tree.nodeNamed("/encoder/block.1/fc:LinearAct/MatMul");
    QVERIFY(matmul >= 0);
    QCOMPARE(tree.scope(tree.scopeOfNode(matmul)).path,
             std::string("/encoder/block.1/fc:LinearAct"));
    // MatMul, LeakyRelu and the nested Scale's Mul (its factor is a constant).
    const std::vector<ScopeStats> stats = scopeStats(tree, {}, {});
    QCOMPARE(stats[size_t(call.id.index)].ops, size_t(3));
  }
};

QTEST_APPLESS_MAIN(ScopeTreeTest)
#include "scope_tree_test.moc"
