// The Pass diff tab shows what session/pass_diff computes: its coloured added
// and removed lines are the PassDiff's line counts, its node counts agree with
// the pass's own record (nodes before -> after, the pass's statistics), and
// "hide passes that changed nothing" hides exactly the unchanged rows.
#include "viewer/pass_diff_pane.h"

#include <QAction>
#include <QComboBox>
#include <QPlainTextEdit>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTextBlock>
#include <QtTest>

#include "session/pass_diff.h"
#include "session/session.h"
#include "tests/support/test_paths.h"
#include "viewer/graph_view.h"
#include "viewer/main_window.h"
#include "viewer/pass_list.h"

using namespace fuselens;
using namespace fuselens::viewer;

namespace {

std::unique_ptr<Session> openSample(const std::string& name, const std::string& dims = {}) {
  auto s = std::make_unique<Session>();
  OpenRequest req{test::sourcePath("/samples/" + name), {}, {}, defaultPipeline()};
  if (!dims.empty()) req.dims[dims] = 8;
  Status st = s->open(req);
  if (!st) qWarning("%s", st.message().c_str());
  return st ? std::move(s) : nullptr;
}

int blocksStartingWith(const QPlainTextEdit* e, const QString& prefix) {
  int n = 0;
  for (QTextBlock b = e->document()->firstBlock(); b.isValid(); b = b.next())
    n += b.text().startsWith(prefix);
  return n;
}

}  // namespace

class PassDiffPaneTest : public QObject {
  Q_OBJECT

 private slots:
  void countsMatchThePass_data() {
    QTest::addColumn<QString>("sample");
    QTest::addColumn<QString>("pass");
    QTest::addColumn<QString>("stat");  // a pass statistic equal to the nodes removed
    QTest::newRow("resnet: simplify folds three BatchNorms") << "resnet_bottleneck.onnx"
                                                             << "simplify"
                                                             << "conv-bn-fold";
    QTest::newRow("reduce_fusion: fuse-patterns") << "reduce_fusion.onnx"
                                                  << "fuse-patterns"
                                                  << "";
    QTest::newRow("llama: const-fold") << "llama_block.onnx"
                                       << "const-fold"
                                       << "";
    QTest::newRow("mlp: fuse-patterns") << "mlp.onnx"
                                        << "fuse-patterns"
                                        << "";
    QTest::newRow("bert: fuse-ops moves nodes into groups") << "bert_layer.onnx"
                                                            << "fuse-ops"
                                                            << "";
  }

  void countsMatchThePass() {
    QFETCH(QString, sample);
    QFETCH(QString, pass);
    QFETCH(QString, stat);
    auto s = openSample(sample.toStdString(), sample.startsWith("llama") ? "seq" : "");
    QVERIFY(s);
    auto row = findSnapshot(s->snapshots(), pass.toStdString());
    QVERIFY(row);
    const Snapshot& before = s->snapshots()[*row - 1];
    const Snapshot& after = s->snapshots()[*row];
    QVERIFY2(after.record.changed, "the row must be a pass that changed the graph");
    const PassDiff d = diffPass(before, after);

    PassDiffPane pane;
    pane.setSession(s.get());
    pane.show();
    pane.showPass(int(*row));
    QCOMPARE(pane.snapshotA(), int(*row) - 1);
    QCOMPARE(pane.snapshotB(), int(*row));
    QVERIFY(d.addedLines + d.removedLines > 0);
    QCOMPARE(pane.addedLines(), int(d.addedLines));
    QCOMPARE(pane.removedLines(), int(d.removedLines));
    // What is drawn is what is counted.
    QCOMPARE(blocksStartingWith(pane.textView(), "+ ") + blocksStartingWith(pane.textView(), "> "),
             int(d.addedLines));
    QCOMPARE(blocksStartingWith(pane.textView(), "- ") + blocksStartingWith(pane.textView(), "< "),
             int(d.removedLines));
    QCOMPARE(blocksStartingWith(pane.textView(), "> "), int(d.movedLines));
    QCOMPARE(pane.textView()->extraSelections().size(),
             qsizetype(std::count_if(pane.lineKinds().begin(), pane.lineKinds().end(),
                                     [](auto k) { return k != PassDiffPane::LineKind::Same; })));
    // The node counts agree with the pass's record.
    QCOMPARE(int64_t(after.record.nodesAfter) - int64_t(after.record.nodesBefore),
             int64_t(d.added.size()) - int64_t(d.removed.size()));
    QVERIFY(pane.summary().contains(QString("%1 removed").arg(d.removed.size())));
    // Side by side: the same lines, one row per line pair, columns of equal length.
    pane.setSideBySide(true);
    QVERIFY(pane.rightView()->isVisible() && !pane.textView()->isVisible());
    QCOMPARE(pane.addedLines(), int(d.addedLines));
    QCOMPARE(pane.removedLines(), int(d.removedLines));
    QCOMPARE(pane.leftView()->document()->blockCount(), int(pane.rows().size()));
    QCOMPARE(pane.rightView()->document()->blockCount(), int(pane.rows().size()));
    pane.setSideBySide(false);
    QCOMPARE(pane.addedLines(), int(d.addedLines));
    if (!stat.isEmpty())
      QCOMPARE(after.record.stats.at(stat.toStdString()), int64_t(d.removed.size()));
  }

  void anyTwoSnapshots() {
    auto s = openSample("resnet_bottleneck.onnx");
    QVERIFY(s);
    const int last = int(s->snapshots().size()) - 1;
    PassDiffPane pane;
    pane.setSession(s.get());
    pane.show();
    pane.showPair(0, last);
    const PassDiff d = diffPass(s->snapshots()[0], s->snapshots()[size_t(last)]);
    QCOMPARE(pane.addedLines(), int(d.addedLines));
    QCOMPARE(pane.removedLines(), int(d.removedLines));
    QVERIFY(pane.summary().startsWith("import -> "));
    pane.showPair(last, last);  // a snapshot against itself: nothing marked
    QCOMPARE(pane.addedLines() + pane.removedLines(), 0);
    QVERIFY(pane.textView()->extraSelections().isEmpty() ||
            pane.lineKinds().front() == PassDiffPane::LineKind::Folded);
  }

  void pickingAandBDiffsTheGraph() {
    QStandardPaths::setTestModeEnabled(true);
    MainWindow w;
    w.setModalErrors(false);
    w.show();
    w.openFile(QString::fromStdString(test::sourcePath("/samples/resnet_bottleneck.onnx")));
    auto settled = [&w] { return !w.isBusy() && !w.graphView()->isLayoutPending(); };
    QTRY_VERIFY_WITH_TIMEOUT(settled() && w.session() && w.session()->lastReport(), 120000);
    w.diffAction()->setChecked(true);
    w.irTabs()->setCurrentWidget(w.diffPane());
    const int last = int(w.session()->snapshots().size()) - 1;
    QCOMPARE(w.passList()->currentSnapshot(), last);
    QComboBox* a = w.diffPane()->boxA();
    a->setCurrentIndex(0);
    emit a->activated(0);  // as a user's pick
    QCOMPARE(w.passList()->currentSnapshot(), last);
    QCOMPARE(w.diffPane()->snapshotA(), 0);  // the pass list's row did not reset A
    QVERIFY(w.diffPane()->summary().startsWith("import -> "));
    QTRY_VERIFY_WITH_TIMEOUT(settled() && w.graphView()->isDiffShown(), 120000);
    // Stepping in the timeline goes back to "this pass against the one before".
    w.passList()->stepBack();
    QCOMPARE(w.diffPane()->snapshotA(), last - 2);
    QCOMPARE(w.diffPane()->snapshotB(), last - 1);
  }

  void hideUnchangedPasses() {
    auto s = openSample("mlp.onnx");
    QVERIFY(s);
    PassList list;
    list.setSession(s.get());
    int unchanged = 0;
    for (size_t i = 1; i < s->snapshots().size(); ++i)
      unchanged += !s->snapshots()[i].record.changed;
    QVERIFY2(unchanged > 0, "mlp's default pipeline has passes that change nothing");
    list.hideUnchangedAction()->setChecked(true);
    int hidden = 0;
    for (int r = 0; r < list.passModel()->rowCount(); ++r) hidden += list.isRowHidden(r);
    QCOMPARE(hidden, unchanged);
    list.selectSnapshot(0);
    for (int steps = 0; list.stepForwardAction()->isEnabled(); ++steps) {
      list.stepForward();
      QVERIFY(!list.isRowHidden(list.currentSnapshot()));
      QVERIFY(steps < list.passModel()->rowCount());
    }
    list.hideUnchangedAction()->setChecked(false);
    for (int r = 0; r < list.passModel()->rowCount(); ++r) QVERIFY(!list.isRowHidden(r));
  }
};

QTEST_MAIN(PassDiffPaneTest)
#include "pass_diff_pane_test.moc"
