// The graph view's overlays on a small named chain: fusion decisions drawn on
// the edges they name, the divergence heat and its legend, highlight rings,
// selecting a tensor's producer, and finding nodes by name or op.
#include <QtTest>

#include "viewer/graph_items.h"
#include "viewer/graph_view.h"
#include "viewer/heat_legend.h"

using namespace fuselens;
using namespace fuselens::viewer;

namespace {

constexpr int kLayoutTimeoutMs = 30000;

TensorType f32(std::vector<int64_t> shape) { return TensorType::of(DType::F32, shape); }

// x -> fc (MatMul) -> bias_add (Add) -> relu (Relu) -> y
Graph namedChain() {
  Graph g;
  ValueId x = g.addInput("x", f32({1, 4}));
  ValueId w = g.addConstant(
      "W", std::make_shared<const TensorData>(DType::F32, std::vector<int64_t>{4, 3}));
  NodeId mm = g.addNode("MatMul", {x, w}, {{"mm", f32({1, 3})}}, {}, "fc");
  NodeId add = g.addNode("Add", {g.node(mm).outputs[0], g.node(mm).outputs[0]},
                         {{"pre", f32({1, 3})}}, {}, "bias_add");
  NodeId relu = g.addNode("Relu", {g.node(add).outputs[0]}, {{"y", f32({1, 3})}}, {}, "relu");
  g.addOutput(g.node(relu).outputs[0]);
  return g;
}

FusionDecision decision(bool accepted) {
  FusionDecision d;
  d.producerName = "fc";
  d.consumerName = "bias_add";
  d.accepted = accepted;
  d.rule = accepted ? FusionRule::AnchorEpilogue : FusionRule::FusionWindow;
  d.reason = accepted ? "accepted: Add runs as the epilogue of MatMul"
                      : "rejected: the group would hold 9 ops; the fusion window is 8";
  d.hint = accepted ? "" : "raise the window: fuse-ops{max-ops=9}";
  d.group = accepted ? 0 : -1;
  d.passName = "fuse-ops";
  return d;
}

EdgeItem* edgeNamed(GraphView& v, const QString& from, const QString& to) {
  for (EdgeItem* e : v.edgeItems())
    if (e->fromName() == from && e->toName() == to) return e;
  return nullptr;
}

void showAndWait(GraphView& v, std::vector<FusionDecision> ds = {}) {
  v.showGraph(namedChain(), std::move(ds));
  QTRY_VERIFY_WITH_TIMEOUT(!v.isLayoutPending(), kLayoutTimeoutMs);
}

}  // namespace

class GraphOverlaysTest : public QObject {
  Q_OBJECT

 private slots:
  void decisionOnEdge_data() {
    QTest::addColumn<int>("kind");  // 0: none, 1: rejected, 2: accepted
    QTest::newRow("no decisions: plain edges") << 0;
    QTest::newRow("rejected: dashed, rule chip, reason + hint") << 1;
    QTest::newRow("accepted: tinted, reason") << 2;
  }

  void decisionOnEdge() {
    QFETCH(int, kind);
    GraphView v;
    v.resize(600, 500);
    v.show();
    std::vector<FusionDecision> ds;
    if (kind > 0) ds.push_back(decision(kind == 2));
    showAndWait(v, ds);
    EdgeItem* e = edgeNamed(v, "fc", "bias_add");
    QVERIFY(e);
    int decided = 0;
    for (EdgeItem* other : v.edgeItems()) decided += other->hasDecision();
    QCOMPARE(decided, kind > 0 ? 1 : 0);
    if (kind == 0) return;
    QVERIFY(e->hasDecision());
    QCOMPARE(e->decision().accepted, kind == 2);
    QCOMPARE(e->pen().style(), kind == 1 ? Qt::DashLine : Qt::SolidLine);
    QVERIFY(e->toolTip().contains(QString::fromStdString(ds[0].reason)));
    QCOMPARE(e->toolTip().contains("hint: raise the window"), kind == 1);
    QCOMPARE(e->toolTip().contains(QString::fromStdString(ds[0].ruleId())), true);
  }

  void heatColorsProducersAndShowsLegend() {
    GraphView v;
    v.resize(600, 500);
    v.show();
    showAndWait(v);
    std::map<std::string, ValueHeat> heat;
    heat["mm"] = ValueHeat{1e-7, 1e-7, true};
    heat["y"] = ValueHeat{0.5, 0.2, false, 40, "beyond rounding (40x)"};
    v.setHeat(heat);
    QVERIFY(!v.heatLegend()->isVisible());  // the overlay is off until asked for
    v.setHeatVisible(true);
    QVERIFY(v.heatLegend()->isVisible());
    QColor relu, fc, add;
    for (NodeItem* n : v.nodeItems()) {
      if (n->name() == "relu") relu = n->heat();
      if (n->name() == "fc") fc = n->heat();
      if (n->name() == "bias_add") add = n->heat();
    }
    QCOMPARE(fc, heatColor(heatFraction(heat["mm"])));
    QCOMPARE(relu, heatColor(heatFraction(heat["y"])));
    QVERIFY(!add.isValid());  // "pre" was not compared
    QVERIFY(relu.red() > fc.red());

    showAndWait(v);  // a new layout keeps the overlay
    QVERIFY(v.nodeNamed("relu")->heat().isValid());
    // the compare table's status words
    QVERIFY(v.nodeNamed("relu")->toolTip().contains("beyond rounding (40x)"));
    v.setHeatVisible(false);
    QVERIFY(!v.nodeNamed("relu")->heat().isValid());
    QVERIFY(!v.heatLegend()->isVisible());
  }

  void highlightRingsNodesAndTheirEdge_data() {
    QTest::addColumn<QStringList>("names");
    QTest::addColumn<int>("found");
    QTest::addColumn<bool>("edgeLit");
    QTest::newRow("producer and consumer") << QStringList{"fc", "bias_add"} << 2 << true;
    QTest::newRow("reversed: nodes, no edge") << QStringList{"bias_add", "fc"} << 2 << false;
    QTest::newRow("one drawn") << QStringList{"fc", "gone"} << 1 << false;
    QTest::newRow("none") << QStringList{} << 0 << false;
  }

  void highlightRingsNodesAndTheirEdge() {
    QFETCH(QStringList, names);
    QFETCH(int, found);
    QFETCH(bool, edgeLit);
    GraphView v;
    v.resize(600, 500);
    v.show();
    showAndWait(v);
    v.highlightNodes({"relu"});  // an earlier ring is cleared by the next call
    QCOMPARE(v.highlightNodes(names), found);
    int lit = 0;
    for (NodeItem* n : v.nodeItems()) lit += n->isHighlighted();
    QCOMPARE(lit, found);
    QCOMPARE(edgeNamed(v, "fc", "bias_add")->isHighlighted(), edgeLit);
  }

  void selectProducerOfValue() {
    GraphView v;
    v.resize(600, 500);
    v.show();
    showAndWait(v);
    QSignalSpy ops(&v, &GraphView::opSelected);
    QVERIFY(v.selectProducerOf("pre"));
    QVERIFY(v.nodeNamed("bias_add")->isSelected());
    QCOMPARE(ops.last().first().toString(), QString("bias_add"));
    QVERIFY(v.selectProducerOf("y"));  // the Relu, not the output ellipse
    QCOMPARE(v.nodeNamed("relu")->isSelected(), true);
    QVERIFY(!v.selectProducerOf("no_such_value"));
  }

  void findNodes_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QStringList>("names");
    QTest::newRow("op, any case") << "relu" << QStringList{"relu"};
    QTest::newRow("op MatMul") << "MatMul" << QStringList{"fc"};
    QTest::newRow("name substring") << "bias" << QStringList{"bias_add"};
    QTest::newRow("substring of one name") << "a" << QStringList{"bias_add"};
    QTest::newRow("graph input by name") << "x" << QStringList{"x"};
    QTest::newRow("blank") << "  " << QStringList{};
    QTest::newRow("nothing") << "Conv" << QStringList{};
  }

  void findNodes() {
    QFETCH(QString, text);
    QFETCH(QStringList, names);
    GraphView v;
    v.resize(600, 500);
    v.show();
    showAndWait(v);
    QStringList got;
    for (NodeItem* n : v.findNodes(text)) got << n->name();
    QCOMPARE(got, names);
  }
};

QTEST_MAIN(GraphOverlaysTest)
#include "graph_overlays_test.moc"
