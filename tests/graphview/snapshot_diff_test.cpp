// Diff mode's numbers: ops matched by name between two snapshots, added and
// changed marks on the later one, per-scope counts with removed ops placed by
// their names' scopes.
#include "session/graphview/snapshot_diff.h"

#include <QtTest>

#include "scoped_models.h"

using namespace fuselens;
using namespace fuselens::graphview;

class SnapshotDiffTest : public QObject {
  Q_OBJECT

 private slots:
  void addedChangedRemoved() {
    const Graph before = test::encoderStack(3);
    Graph after = before;
    // layer.1: one op changes its type, one is renamed (removed + added).
    NodeId changed = *after.findNode("/encoder/layer.1/intermediate/Erf_25");
    after.mutableNode(changed).op = "Tanh";
    NodeId renamed = *after.findNode("/encoder/layer.1/output/MatMul_26");
    after.mutableNode(renamed).name = "/encoder/layer.1/output/MatMul_fused";
    const ScopeTree tree(flattenGraph(after));
    const SnapshotDiff d = diffSnapshots(flattenGraph(before), tree);
    QCOMPARE(d.nodes[size_t(tree.nodeNamed("/encoder/layer.1/intermediate/Erf_25"))],
             DiffMark::Changed);
    QCOMPARE(d.nodes[size_t(tree.nodeNamed("/encoder/layer.1/output/MatMul_fused"))],
             DiffMark::Added);
    QCOMPARE(d.nodes[size_t(tree.nodeNamed("/encoder/layer.0/output/Add_14"))], DiffMark::Same);
    const size_t root = 0, l1 = size_t(tree.find("/encoder/layer.1")->index),
                 l0 = size_t(tree.find("/encoder/layer.0")->index),
                 out1 = size_t(tree.find("/encoder/layer.1/output")->index);
    QCOMPARE(d.added[root], size_t(1));
    QCOMPARE(d.changed[root], size_t(1));
    QCOMPARE(d.removed[root], size_t(1));
    QCOMPARE(d.removed[out1], size_t(1));
    QCOMPARE(d.added[l1] + d.changed[l1] + d.removed[l1], size_t(3));
    QCOMPARE(d.added[l0] + d.changed[l0] + d.removed[l0], size_t(0));
    std::vector<ScopeStats> stats = scopeStats(tree, {}, {});
    applyDiff(stats, d);
    QVERIFY(stats[l0].unchanged());
    QVERIFY(!stats[l1].unchanged());
  }

  void noDiffIsNeverUnchanged() {
    const ScopeTree tree(flattenGraph(test::encoderStack(1)));
    const std::vector<ScopeStats> stats = scopeStats(tree, {}, {});
    for (const ScopeStats& s : stats) QVERIFY(!s.unchanged());
  }
};

QTEST_APPLESS_MAIN(SnapshotDiffTest)
#include "snapshot_diff_test.moc"
