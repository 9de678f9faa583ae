// The scoped layout: open scopes laid out alone and composed without overlap,
// edges between scopes attached to the boxes that show their ends, the cache,
// dot in a child process that can be cancelled, and the layered fallback.
#include "session/graphview/scoped_layout.h"

#include <QtTest>
#include <chrono>
#include <thread>

#include "passes/fusion_decision.h"
#include "scoped_models.h"

using namespace fuselens;
using namespace fuselens::graphview;

namespace {

bool overlap(const LayoutBox& a, const LayoutBox& b) {
  const double eps = 0.5;
  return a.x + eps < b.x + b.width && b.x + eps < a.x + a.width && a.y + eps < b.y + b.height &&
         b.y + eps < a.y + a.height;
}

bool inside(const LayoutBox& in, const LayoutBox& out) {
  const double eps = 1.0;
  return in.x >= out.x - eps && in.y >= out.y - eps && in.x + in.width <= out.x + out.width + eps &&
         in.y + in.height <= out.y + out.height + eps;
}

bool near(LayoutPoint p, const LayoutBox& b) {
  const double eps = 9.0;  // the arrowhead's length and dot's port rounding
  return p.x >= b.x - eps && p.x <= b.x + b.width + eps && p.y >= b.y - eps &&
         p.y <= b.y + b.height + eps;
}

Expected<SceneLayout> lay(const ScopeTree& tree, const Expansion& e, LayoutCache& cache,
                          bool dot = true) {
  ScopedLayoutOptions opts;
  opts.engine.useDot = dot;
  return layoutScoped(tree, e, scopeStats(tree, {}, {}), opts, cache);
}

// A graph dot needs seconds for: many nodes and long-range edges.
BoxGraph heavyGraph(int n) {
  BoxGraph g;
  for (int i = 0; i < n; ++i) g.nodes.push_back({60, 30, false, -1});
  for (int i = 1; i < n; ++i) {
    g.edges.push_back({i - 1, i, 0, 0});
    g.edges.push_back({int((long(i) * 7919) % 104729) % i, i, 0, 0});
  }
  return g;
}

}  // namespace

class ScopedLayoutTest : public QObject {
  Q_OBJECT

 private slots:
  void siblingScopesNeverOverlap_data() {
    QTest::addColumn<bool>("dot");
    QTest::newRow("dot") << true;
    QTest::newRow("fallback") << false;
  }
  void siblingScopesNeverOverlap() {
    QFETCH(bool, dot);
    ScopeTree tree(flattenGraph(test::encoderStack(6)));
    Expansion e;
    e.open = {"/encoder", "/encoder/layer.1", "/encoder/layer.1/attention"};
    LayoutCache cache;
    Expected<SceneLayout> scene = lay(tree, e, cache, dot);
    QVERIFY2(scene.isOk(), scene.isOk() ? "" : scene.message().c_str());
    QVERIFY(scene->collapsed > 0);
    for (size_t i = 0; i < scene->scopes.size(); ++i)
      for (size_t j = i + 1; j < scene->scopes.size(); ++j) {
        const SceneScope &a = scene->scopes[i], &b = scene->scopes[j];
        if (tree.scope(a.scope).parent != tree.scope(b.scope).parent) continue;
        QVERIFY2(!overlap(a.box, b.box), (a.path + " / " + b.path).c_str());
      }
    // Every drawn node sits inside the frame of each open scope above it, and
    // overlaps no other box of its scope.
    for (size_t n = 0; n < scene->nodes.size(); ++n) {
      const ScopeId home = tree.scopeOfNode(scene->flatIndex[n]);
      for (const SceneScope& s : scene->scopes) {
        if (!s.collapsed && tree.contains(s.scope, home))
          QVERIFY2(inside(scene->nodes[n].box, s.box), scene->nodes[n].name.c_str());
        if (s.collapsed) QVERIFY(!overlap(scene->nodes[n].box, s.box));
      }
    }
    if (!dot) QVERIFY(!scene->notes.empty());
  }

  void edgesBetweenScopesAttachToTheirBoxes() {
    ScopeTree tree(flattenGraph(test::encoderStack(3)));
    Expansion e;
    e.open = {"/encoder"};  // layers collapsed, side by side in /encoder
    LayoutCache cache;
    Expected<SceneLayout> scene = lay(tree, e, cache);
    QVERIFY(scene.isOk());
    auto sceneIndex = [&](const std::string& path) {
      for (size_t i = 0; i < scene->scopes.size(); ++i)
        if (scene->scopes[i].path == path) return int(i);
      return -1;
    };
    const int l0 = sceneIndex("/encoder/layer.0"), l1 = sceneIndex("/encoder/layer.1");
    QVERIFY(l0 >= 0 && l1 >= 0);
    QVERIFY(scene->scopes[size_t(l0)].collapsed);
    bool found = false;
    for (const SceneEdge& edge : scene->edges) {
      if (edge.from.scope != l0 || edge.to.scope != l1) continue;
      found = true;
      QVERIFY(edge.routed);  // both ends drawn in /encoder: dot's route
      QVERIFY(near(edge.path.points.front(), scene->scopes[size_t(l0)].box));
      QVERIFY(near(edge.path.arrowTip, scene->scopes[size_t(l1)].box));
    }
    QVERIFY(found);
    // An op inside a collapsed scope is shown by that scope's box.
    const int deep = tree.nodeNamed("/encoder/layer.2/attention/self/Softmax_31");
    QVERIFY(deep >= 0);
    QCOMPARE(scene->endOfFlat[size_t(deep)].scope, sceneIndex("/encoder/layer.2"));
    // The edge from the embeddings (collapsed at the top) into layer.0 ends at both boxes.
    const int emb = sceneIndex("/embeddings"), enc = sceneIndex("/encoder");
    bool crossing = false;
    for (const SceneEdge& edge : scene->edges)
      if (edge.from.scope == emb && edge.to.scope == l0) {
        crossing = true;
        QVERIFY(!edge.routed);  // layer.0 is inside the open /encoder: drawn straight
        QVERIFY(near(edge.path.points.front(), scene->scopes[size_t(emb)].box));
        QVERIFY(near(edge.path.arrowTip, scene->scopes[size_t(l0)].box));
      }
    QVERIFY(crossing);
    QVERIFY(enc >= 0 && !scene->scopes[size_t(enc)].collapsed);
  }

  void cacheLaysOutOnlyWhatChanged() {
    ScopeTree tree(flattenGraph(test::encoderStack(4)));
    Expansion e;
    e.open = {"/encoder"};
    LayoutCache cache;
    Expected<SceneLayout> first = lay(tree, e, cache);
    QVERIFY(first.isOk());
    QCOMPARE(first->dotRuns, size_t(2));  // the top and /encoder
    Expected<SceneLayout> again = lay(tree, e, cache);
    QCOMPARE(again->dotRuns, size_t(0));
    e.open.insert("/encoder/layer.2");
    Expected<SceneLayout> opened = lay(tree, e, cache);
    QCOMPARE(opened->dotRuns, size_t(3));  // layer.2, then /encoder and the top around it
  }

  void focusDrawsOneScope() {
    ScopeTree tree(flattenGraph(test::encoderStack(3)));
    ScopedLayoutOptions opts;
    opts.focus = *tree.find("/encoder/layer.1");
    Expansion e;
    LayoutCache cache;
    Expected<SceneLayout> scene = layoutScoped(tree, e, scopeStats(tree, {}, {}), opts, cache);
    QVERIFY(scene.isOk());
    for (const SceneScope& s : scene->scopes) QVERIFY(s.path.rfind("/encoder/layer.1/", 0) == 0);
    QVERIFY(scene->nodes.empty());              // layer.1 holds scopes only
    QCOMPARE(scene->scopes.size(), size_t(3));  // attention, intermediate, output
  }

  void dotRunsInAChildAndCanBeCancelled() {
    const BoxGraph g = heavyGraph(2500);
    CancelToken cancel;
    std::thread canceller([cancel] {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      cancel.cancel();
    });
    const auto t0 = std::chrono::steady_clock::now();
    Expected<BoxGeometry> geo = runDot(g, 120.0, cancel);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    canceller.join();
    QVERIFY(!geo.isOk());
    QCOMPARE(geo.message(), std::string("cancelled"));
    QVERIFY2(s < 2.0, qPrintable(QString::number(s)));
  }

  void pastItsBudgetTheFallbackTakesOver() {
    const BoxGraph g = heavyGraph(2500);
    BoxLayoutOptions opts;
    opts.dotSeconds = 0.1;
    Expected<BoxGeometry> geo = layoutBoxes(g, opts);
    QVERIFY(geo.isOk());
    QVERIFY2(geo->note.find("dot ran past 100 ms") != std::string::npos, geo->note.c_str());
    QCOMPARE(geo->nodes.size(), g.nodes.size());
    QCOMPARE(geo->edges.size(), g.edges.size());
  }

  void smallGraphsComeBackFromDot() {
    BoxGraph g;
    g.nodes = {{60, 30, false, -1}, {60, 30, false, 0}, {60, 30, false, 0}};
    g.clusters = {{80, 14}};
    g.edges = {{0, 1, 0, 0}, {1, 2, 40, 12}};
    Expected<BoxGeometry> geo = runDot(g, 10.0, CancelToken());
    QVERIFY2(geo.isOk(), geo.isOk() ? "" : geo.message().c_str());
    QVERIFY(geo->note.empty());
    QVERIFY(inside(geo->nodes[1], geo->clusters[0]));
    QVERIFY(!overlap(geo->nodes[0], geo->nodes[1]));
    QVERIFY(geo->edges[1].hasLabel);
    QVERIFY(geo->nodes[0].y < geo->nodes[1].y);  // top to bottom
  }
};

QTEST_APPLESS_MAIN(ScopedLayoutTest)
#include "scoped_layout_test.moc"
