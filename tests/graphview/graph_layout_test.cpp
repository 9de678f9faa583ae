// Graph layout without widgets: fused bodies become clusters whose ops are
// wired to the outside, constants fold into labels, big graphs fail cleanly.
#include "session/graphview/graph_layout.h"

#include <QtTest>
#include <algorithm>

using namespace fuselens;
using namespace fuselens::graphview;

namespace {

std::shared_ptr<const TensorData> weights(std::vector<int64_t> shape) {
  return std::make_shared<const TensorData>(DType::F32, std::move(shape));
}

TensorType f32(std::vector<int64_t> shape) { return TensorType::of(DType::F32, shape); }

// x -> MatMul(x, W) -> Add(., b) -> Relu -> y
Graph plainChain() {
  Graph g;
  ValueId x = g.addInput("x", f32({1, 4}));
  ValueId w = g.addConstant("W", weights({4, 3}));
  ValueId b = g.addConstant("b", weights({3}));
  NodeId mm = g.addNode("MatMul", {x, w}, {{"mm", f32({1, 3})}});
  NodeId add = g.addNode("Add", {g.node(mm).outputs[0], b}, {{"add", f32({1, 3})}});
  NodeId relu = g.addNode("Relu", {g.node(add).outputs[0]}, {{"y", f32({1, 3})}});
  g.addOutput(g.node(relu).outputs[0]);
  return g;
}

// The same chain as one fused group: Fused(x, W, b) { MatMul, Add, Relu }.
Graph fusedChain() {
  auto body = std::make_shared<Graph>();
  ValueId bx = body->addInput("a0", f32({1, 4}));
  ValueId bw = body->addInput("a1", f32({4, 3}));
  ValueId bb = body->addInput("a2", f32({3}));
  NodeId mm = body->addNode("MatMul", {bx, bw}, {{"t0", f32({1, 3})}});
  NodeId add = body->addNode("Add", {body->node(mm).outputs[0], bb}, {{"t1", f32({1, 3})}});
  NodeId relu = body->addNode("Relu", {body->node(add).outputs[0]}, {{"t2", f32({1, 3})}});
  body->addOutput(body->node(relu).outputs[0]);

  Graph g;
  ValueId x = g.addInput("x", f32({1, 4}));
  ValueId w = g.addConstant("W", weights({4, 3}));
  ValueId b = g.addConstant("b", weights({3}));
  Attributes attrs;
  attrs.set("group", int64_t{0});
  attrs.set("kind", std::string("OutEWiseFusable"));
  NodeId f = g.addNode(kFusedOp, {x, w, b}, {{"y", f32({1, 3})}}, attrs);
  g.mutableNode(f).domain = kFuseLensDomain;
  g.mutableNode(f).body = body;
  NodeId sig = g.addNode("Sigmoid", {g.node(f).outputs[0]}, {{"z", f32({1, 3})}});
  g.addOutput(g.node(sig).outputs[0]);
  return g;
}

int findOp(const GraphLayout& l, const std::string& op) {
  for (size_t i = 0; i < l.nodes.size(); ++i)
    if (l.nodes[i].op == op && l.nodes[i].kind == LayoutNodeKind::Op) return static_cast<int>(i);
  return -1;
}

bool hasEdge(const GraphLayout& l, int from, int to) {
  return std::any_of(l.edges.begin(), l.edges.end(),
                     [&](const LayoutEdge& e) { return e.from == from && e.to == to; });
}

bool inside(const LayoutBox& inner, const LayoutBox& outer) {
  return inner.x >= outer.x && inner.y >= outer.y &&
         inner.x + inner.width <= outer.x + outer.width &&
         inner.y + inner.height <= outer.y + outer.height;
}

}  // namespace

class GraphLayoutTest : public QObject {
  Q_OBJECT

 private slots:
  void plainChainFoldsConstants() {
    auto layout = layoutGraph(plainChain());
    QVERIFY2(layout.isOk(), layout.message().c_str());
    const GraphLayout& l = *layout;
    QCOMPARE(l.nodes.size(), size_t(5));  // x, MatMul, Add, Relu, y: no weight nodes
    QCOMPARE(l.edges.size(), size_t(4));
    QVERIFY(l.clusters.empty());
    const LayoutNode& mm = l.nodes[findOp(l, "MatMul")];
    QVERIFY(std::find(mm.lines.begin(), mm.lines.end(), "W f32[4,3]") != mm.lines.end());
    QCOMPARE(l.nodes[0].kind, LayoutNodeKind::Input);
    QVERIFY(l.nodes[0].box.y < mm.box.y);  // top to bottom
  }

  void edgesHaveSplines() {
    auto layout = layoutGraph(plainChain());
    QVERIFY(layout.isOk());
    for (const LayoutEdge& e : layout->edges) {
      QVERIFY(e.points.size() >= 4);
      QCOMPARE((e.points.size() - 1) % 3, size_t(0));
      QVERIFY(e.hasArrow);
    }
  }

  void fusedGroupBecomesCluster() {
    auto layout = layoutGraph(fusedChain());
    QVERIFY2(layout.isOk(), layout.message().c_str());
    const GraphLayout& l = *layout;
    QCOMPARE(l.clusters.size(), size_t(1));
    QCOMPARE(l.clusters[0].label, std::string("group 0 (OutEWiseFusable)"));
    for (const char* op : {"MatMul", "Add", "Relu"}) {
      const int i = findOp(l, op);
      QVERIFY2(i >= 0, op);
      QCOMPARE(l.nodes[i].group, 0);
      QVERIFY(l.nodes[i].bodyNode.valid());
      QCOMPARE(l.nodes[i].node, l.clusters[0].node);
      QVERIFY2(inside(l.nodes[i].box, l.clusters[0].box), op);
    }
    const int sig = findOp(l, "Sigmoid");
    QCOMPARE(l.nodes[sig].group, -1);
    QVERIFY(!inside(l.nodes[sig].box, l.clusters[0].box));
  }

  void edgesCrossIntoBodyOps() {
    auto layout = layoutGraph(fusedChain());
    QVERIFY(layout.isOk());
    const GraphLayout& l = *layout;
    QVERIFY(hasEdge(l, 0, findOp(l, "MatMul")));                   // x -> MatMul inside
    QVERIFY(hasEdge(l, findOp(l, "Relu"), findOp(l, "Sigmoid")));  // Relu -> outside user
    QVERIFY(hasEdge(l, findOp(l, "MatMul"), findOp(l, "Add")));
    QCOMPARE(l.edges.size(), size_t(5));  // x->MM, MM->Add, Add->Relu, Relu->Sig, Sig->z
    const LayoutNode& add = l.nodes[findOp(l, "Add")];
    QVERIFY(std::find(add.lines.begin(), add.lines.end(), "b f32[3]") != add.lines.end());
  }

  void manyConstantsAreSummarized() {
    Graph g;
    ValueId x = g.addInput("x", f32({2}));
    std::vector<ValueId> ins{x};
    for (int i = 0; i < 5; ++i) ins.push_back(g.addConstant("c" + std::to_string(i), weights({2})));
    NodeId n = g.addNode("Sum", ins, {{"y", f32({2})}});
    g.addOutput(g.node(n).outputs[0]);
    LayoutOptions opts;
    opts.maxConstantLines = 3;
    auto layout = layoutGraph(g, opts);
    QVERIFY(layout.isOk());
    const LayoutNode& sum = layout->nodes[findOp(*layout, "Sum")];
    QCOMPARE(sum.lines.back(), std::string("+2 constants"));
    QCOMPARE(sum.lines.size(), size_t(5));  // type, 3 constants, summary
  }

  void tooLargeFailsWithASentence() {
    LayoutOptions opts;
    opts.maxNodes = 2;
    auto layout = layoutGraph(plainChain(), opts);
    QVERIFY(!layout.isOk());
    QVERIFY(layout.message().find("3 ops") != std::string::npos);
  }
};

QTEST_GUILESS_MAIN(GraphLayoutTest)
#include "graph_layout_test.moc"
