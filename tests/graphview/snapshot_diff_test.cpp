// Diff mode's numbers: ops matched by name between two snapshots, then by
// origin, added and changed marks on the later one, per-scope counts with
// removed ops placed where their origin went, else by their names' scopes.
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

  // With origins (as every imported graph has), a renamed op is the op it
  // was, changed; an op merged away counts as removed where its origin went.
  void originsFollowRenamesAndMerges() {
    Graph before = test::encoderStack(3);
    before.markAsOriginal();
    Graph after = before;
    NodeId renamed = *after.findNode("/encoder/layer.1/output/MatMul_26");
    after.mutableNode(renamed).name = "/encoder/layer.1/output/MatMul_fused";
    // layer.2's Erf is folded into layer.0's output Add (its origin moves there).
    NodeId gone = *after.findNode("/encoder/layer.2/intermediate/Erf_38");
    NodeId holder = *after.findNode("/encoder/layer.0/output/Add_14");
    after.mutableNode(holder).origins.push_back(gone);
    after.replaceAllUses(after.node(gone).outputs[0], after.node(gone).inputs[0]);
    after.removeNode(gone);
    const ScopeTree tree(flattenGraph(after));
    const SnapshotDiff d = diffSnapshots(flattenGraph(before), tree);
    QCOMPARE(d.nodes[size_t(tree.nodeNamed("/encoder/layer.1/output/MatMul_fused"))],
             DiffMark::Changed);
    const size_t out0 = size_t(tree.find("/encoder/layer.0/output")->index),
                 out1 = size_t(tree.find("/encoder/layer.1/output")->index);
    QCOMPARE(d.removed[out1], size_t(0));  // the rename is no removal
    QCOMPARE(d.changed[out1], size_t(1));
    QCOMPARE(d.removed[out0], size_t(1));  // Erf_38 went into layer.0's Add
  }

  void noDiffIsNeverUnchanged() {
    const ScopeTree tree(flattenGraph(test::encoderStack(1)));
    const std::vector<ScopeStats> stats = scopeStats(tree, {}, {});
    for (const ScopeStats& s : stats) QVERIFY(!s.unchanged());
  }
};

QTEST_APPLESS_MAIN(SnapshotDiffTest)
#include "snapshot_diff_test.moc"
