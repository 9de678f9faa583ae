// The graph view at the scale of real models: a generated 10,000-op encoder
// stack opens with a bounded number of items and no refusal; a scope opens;
// a search finds an op deep inside a collapsed scope, opens the scopes above
// it and centres it; stepping to another snapshot keeps the anchor in view;
// a layout can be cancelled mid-way.
#include <QLabel>
#include <QRegularExpression>
#include <QtTest>

#include "tests/graphview/scoped_models.h"
#include "viewer/graph_items.h"
#include "viewer/graph_view.h"
#include "viewer/minimap.h"
#include "viewer/scope_item.h"

using namespace fuselens;
using namespace fuselens::viewer;

namespace {

constexpr int kLayoutTimeoutMs = 120000;
constexpr int kLayers = 770;  // 2 + 770 * 13 + 1 = 10,013 ops

const Graph& bigGraph() {
  static const Graph g = test::encoderStack(kLayers);
  return g;
}

// The Softmax of layer l, as encoderStack names it.
QString softmaxOf(int l) {
  return QStringLiteral("/encoder/layer.%1/attention/self/Softmax_%2").arg(l).arg(5 + 13 * l);
}

bool waitLayout(GraphView& v) {
  return QTest::qWaitFor([&] { return !v.isLayoutPending(); }, kLayoutTimeoutMs);
}

bool centred(GraphView& v, QGraphicsItem* item) {
  const QPoint c = v.mapFromScene(item->sceneBoundingRect().center());
  const QPoint mid = v.viewport()->rect().center();
  return (c - mid).manhattanLength() < 40;
}

bool inView(GraphView& v, QGraphicsItem* item) {
  return v.viewport()->rect().contains(v.mapFromScene(item->sceneBoundingRect().center()));
}

}  // namespace

class GraphViewScaleTest : public QObject {
  Q_OBJECT

 private slots:
  void opensTenThousandOpsBounded() {
    GraphView v;
    v.resize(1200, 800);
    v.show();
    QSignalSpy failed(&v, &GraphView::layoutFailed);
    v.showGraph(bigGraph());
    QVERIFY(waitLayout(v));
    QCOMPARE(failed.count(), 0);
    QVERIFY2(v.drawnBoxes() > 5 && v.drawnBoxes() <= 220, qPrintable(v.drawnSummary()));
    QVERIFY(v.scene()->items().size() < 1200);
    QVERIFY(!v.scopeItems().isEmpty());
    QVERIFY(v.minimap()->isVisible());
    const QRegularExpression line(
        "^drawn: \\d+ boxes \\(\\d+ scopes collapsed\\), \\d+ edges, layout \\d+ ms, first paint "
        "\\d+ ms$");
    QVERIFY2(line.match(v.drawnSummary()).hasMatch(), qPrintable(v.drawnSummary()));
  }

  void opensAScope() {
    GraphView v;
    v.resize(1200, 800);
    v.show();
    v.showGraph(bigGraph());
    QVERIFY(waitLayout(v));
    ScopeItem* collapsed = nullptr;
    for (ScopeItem* s : v.scopeItems())
      if (s->isCollapsed() && s->scope().stats.ops > 10) collapsed = s;
    QVERIFY(collapsed);
    const QString path = collapsed->path();
    const int before = v.drawnBoxes();
    v.toggleScope(path);
    QVERIFY(waitLayout(v));
    ScopeItem* opened = v.scopeNamed(path);
    QVERIFY(opened);
    QVERIFY(!opened->isCollapsed());
    QVERIFY(v.drawnBoxes() > before);
    QVERIFY(v.openScopes().contains(path));
    v.toggleScope(path);
    QVERIFY(waitLayout(v));
    QVERIFY(v.scopeNamed(path)->isCollapsed());
  }

  void searchRevealsADeepOp() {
    GraphView v;
    v.resize(1200, 800);
    v.show();
    v.showGraph(bigGraph());
    QVERIFY(waitLayout(v));
    const QString name = softmaxOf(500);
    QVERIFY(!v.nodeNamed(name));  // collapsed away
    const QList<SearchHit> hits = v.search(QStringLiteral("Softmax_%1").arg(5 + 13 * 500));
    QCOMPARE(hits.size(), 1);
    QCOMPARE(hits[0].name, name);
    QVERIFY(v.revealNode(name));
    QVERIFY(waitLayout(v));
    NodeItem* n = v.nodeNamed(name);
    QVERIFY(n);
    QVERIFY(n->isSelected());
    QVERIFY(centred(v, n));
    QVERIFY(v.openScopes().contains("/encoder/layer.500/attention/self"));
    QVERIFY(v.breadcrumbs()->text().contains("layer.500"));
  }

  void searchByTensorAndAttribute() {
    Graph g = test::encoderStack(3);
    NodeId sm = *g.findNode("/encoder/layer.2/attention/self/Softmax_31");
    g.mutableNode(sm).attrs.set("axis", int64_t{-1});
    GraphView v;
    v.resize(800, 600);
    v.show();
    v.showGraph(g);
    QVERIFY(waitLayout(v));
    QCOMPARE(v.search("axis=-1").size(), 1);
    QCOMPARE(v.search("AXIS").size(), 1);
    QCOMPARE(v.search("axis=-1")[0].name, QString("/encoder/layer.2/attention/self/Softmax_31"));
    QCOMPARE(v.search("t32").size(), 1);  // the tensor Softmax_31 makes
    QCOMPARE(v.search("axis=0").size(), 0);
  }

  void steppingKeepsTheAnchorInView() {
    GraphView v;
    v.resize(1200, 800);
    v.show();
    v.showGraph(bigGraph());
    QVERIFY(waitLayout(v));
    const QString name = softmaxOf(300);
    QVERIFY(v.revealNode(name));
    QVERIFY(waitLayout(v));
    QVERIFY(centred(v, v.nodeNamed(name)));
    // The next snapshot: the same ops and one more at the end.
    Graph next = bigGraph();
    NodeId extra = next.addNode("Relu", {next.outputs()[0]}, {{"extra", test::f32Row()}}, {},
                                "/pooler/Relu_extra");
    next.setOutputs({next.node(extra).outputs[0]});
    v.showGraph(next);
    QVERIFY(waitLayout(v));
    NodeItem* n = v.nodeNamed(name);
    QVERIFY(n);  // the open scopes were kept
    QVERIFY(inView(v, n));
    QVERIFY(centred(v, n));
  }

  void cancelMidLayout() {
    GraphView v;
    v.resize(800, 600);
    v.show();
    v.showGraph(bigGraph());
    v.cancelLayout();
    QVERIFY(QTest::qWaitFor([&] { return !v.isLayoutPending(); }, 10000));
    // The view works afterwards.
    v.showGraph(test::encoderStack(2));
    QVERIFY(waitLayout(v));
    QVERIFY(!v.nodeItems().isEmpty());
    QVERIFY(v.nodeNamed("/encoder/layer.1/attention/self/Softmax_18"));
  }

  void diffMarksAndDims() {
    const Graph before = test::encoderStack(12);
    Graph after = before;
    after.mutableNode(*after.findNode("/encoder/layer.4/intermediate/Erf_64")).op = "Tanh";
    GraphView v;
    v.resize(1000, 700);
    v.show();
    v.setDiffBase(&before);
    v.showGraph(after);
    QVERIFY(waitLayout(v));
    QVERIFY(v.isDiffShown());
    QVERIFY(v.revealNode("/encoder/layer.4/intermediate/Erf_64"));
    QVERIFY(waitLayout(v));
    NodeItem* changed = v.nodeNamed("/encoder/layer.4/intermediate/Erf_64");
    QVERIFY(changed);
    QCOMPARE(changed->layout().diff, 2);
    QCOMPARE(changed->opacity(), 1.0);
    ScopeItem* same = v.scopeNamed("/encoder/layer.7");
    QVERIFY(same);
    QVERIFY(same->opacity() < 1.0);  // the pass left it alone
    v.setDiffBase(nullptr);
    v.showGraph(after);
    QVERIFY(waitLayout(v));
    QVERIFY(!v.isDiffShown());
    QCOMPARE(v.scopeNamed("/encoder/layer.7")->opacity(), 1.0);
  }

  void keysAndDoubleClickOpenAndClose() {
    GraphView v;
    v.resize(1000, 700);
    v.show();
    v.showGraph(test::encoderStack(12));
    QVERIFY(waitLayout(v));
    v.expandToDepth(1);
    QVERIFY(waitLayout(v));
    ScopeItem* layer = v.scopeNamed("/encoder/layer.2");
    QVERIFY(layer && layer->isCollapsed());
    v.centerOn(layer);
    QTest::mouseDClick(v.viewport(), Qt::LeftButton, {},
                       v.mapFromScene(layer->sceneBoundingRect().center()));
    QVERIFY(waitLayout(v));
    QVERIFY(!v.scopeNamed("/encoder/layer.2")->isCollapsed());
    // '-' on a selected op closes the scope that holds it.
    v.scene()->clearSelection();
    NodeItem* op = nullptr;
    v.expandToDepth(3);
    QVERIFY(waitLayout(v));
    op = v.nodeNamed("/encoder/layer.2/intermediate/Erf_38");
    QVERIFY(op);
    op->setSelected(true);
    QTest::keyClick(&v, '-');
    QVERIFY(waitLayout(v));
    QVERIFY(!v.nodeNamed("/encoder/layer.2/intermediate/Erf_38"));
    ScopeItem* closed = v.scopeNamed("/encoder/layer.2/intermediate");
    QVERIFY(closed && closed->isCollapsed());
    closed->setSelected(true);
    QTest::keyClick(&v, '+');
    QVERIFY(waitLayout(v));
    QVERIFY(v.nodeNamed("/encoder/layer.2/intermediate/Erf_38"));
    // F shows the selected scope alone.
    v.expandToDepth(1);
    QVERIFY(waitLayout(v));
    v.scopeNamed("/encoder/layer.5")->setSelected(true);
    QTest::keyClick(&v, 'f');
    QVERIFY(waitLayout(v));
    QCOMPARE(v.focusedScope(), QString("/encoder/layer.5"));
    QVERIFY(!v.scopeNamed("/encoder/layer.4"));
  }

  void expandToDepthAndFocus() {
    GraphView v;
    v.resize(1000, 700);
    v.show();
    v.showGraph(test::encoderStack(12));
    QVERIFY(waitLayout(v));
    v.expandToDepth(1);
    QVERIFY(waitLayout(v));
    QVERIFY(v.scopeNamed("/encoder/layer.3")->isCollapsed());
    v.focusScope("/encoder/layer.3");
    QVERIFY(waitLayout(v));
    QVERIFY(!v.scopeNamed("/encoder/layer.2"));
    QVERIFY(v.scopeNamed("/encoder/layer.3/attention"));
    QVERIFY(v.breadcrumbs()->text().contains("focused"));
    v.focusScope(QString());
    QVERIFY(waitLayout(v));
    QVERIFY(v.scopeNamed("/encoder/layer.2"));
  }
};

QTEST_MAIN(GraphViewScaleTest)
#include "graph_view_scale_test.moc"
