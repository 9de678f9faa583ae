// The main window end to end on a bundled sample: open, pipeline, compare,
// step through the timeline, and what the graph view and status bar show.
// Errors go to the errorShown signal (no modal box) so nothing blocks.
#include "viewer/main_window.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QPlainTextEdit>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>

#include "session/session.h"
#include "tests/support/test_paths.h"
#include "viewer/graph_items.h"
#include "viewer/graph_view.h"
#include "viewer/pass_list.h"

using namespace fuselens;
using namespace fuselens::viewer;

namespace {

constexpr int kPipelineTimeoutMs = 60000;

// FUSELENS_SAMPLES_DIR overrides the bundled samples folder.
QString samplePath(const QString& name) {
  const QByteArray dir = qgetenv("FUSELENS_SAMPLES_DIR");
  return (dir.isEmpty() ? QString::fromStdString(fuselens::test::sourcePath("/samples"))
                        : QString(dir)) +
         "/" + name;
}

int snapshotStartingWith(const Session& s, const std::string& prefix) {
  const auto& snaps = s.snapshots();
  for (size_t i = 0; i < snaps.size(); ++i)
    if (snaps[i].label.rfind(prefix, 0) == 0) return static_cast<int>(i);
  return -1;
}

QString firstError(const QSignalSpy& spy) {
  return spy.isEmpty() ? QString() : spy.first().first().toString();
}

}  // namespace

#define REQUIRE_SAMPLE()                                       \
  if (!QFileInfo::exists(samplePath("matmul_bias_relu.onnx"))) \
  QFAIL("samples/matmul_bias_relu.onnx is committed but missing")

class MainWindowTest : public QObject {
  Q_OBJECT

 private slots:
  // Recent files go to a throwaway settings folder, not the user's.
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  void fuseOpsSnapshotShowsOneGroup() {
    REQUIRE_SAMPLE();
    MainWindow w;
    w.setModalErrors(false);
    QSignalSpy errors(&w, &MainWindow::errorShown);
    w.show();
    w.openFile(samplePath("matmul_bias_relu.onnx"));
    QVERIFY(w.isBusy());
    QTRY_VERIFY_WITH_TIMEOUT(!w.isBusy(), kPipelineTimeoutMs);
    QVERIFY2(errors.isEmpty(), qPrintable(firstError(errors)));

    const int fuse = snapshotStartingWith(*w.session(), "fuse-ops");
    QVERIFY2(fuse > 0, "the default pipeline has no fuse-ops pass");
    PassList* list = w.passList();
    list->selectSnapshot(0);
    QCOMPARE(list->currentSnapshot(), 0);
    QVERIFY(!list->stepBackAction()->isEnabled());
    while (list->currentSnapshot() < fuse) {
      QVERIFY(list->stepForwardAction()->isEnabled());
      list->stepForwardAction()->trigger();
    }
    QCOMPARE(list->currentSnapshot(), fuse);
    QTRY_VERIFY_WITH_TIMEOUT(!w.graphView()->isLayoutPending(), kPipelineTimeoutMs);

    GraphView* view = w.graphView();
    QCOMPARE(view->clusterCount(), 1);
    const ClusterItem* cluster = view->clusterItems().first();
    QStringList ops = view->opsInGroup(cluster->group());
    ops.sort();
    QCOMPARE(ops, QStringList({"Add", "MatMul", "Relu"}));
    QVERIFY(cluster->label().startsWith(QStringLiteral("group %1").arg(cluster->group())));
    QVERIFY(w.irPane()->toPlainText().contains("Fused"));

    // The CLI's verdict, word for word: rounding-aware by default.
    QVERIFY2(w.compareText().startsWith("PASS: "), qPrintable(w.compareText()));
    QVERIFY2(w.compareText().contains("tensors within rounding"), qPrintable(w.compareText()));
    QCOMPARE(w.compareText().toStdString(), w.session()->lastReport()->verdict());
  }

  void clickingANodeSelectsIt() {
    REQUIRE_SAMPLE();
    MainWindow w;
    w.setModalErrors(false);
    w.show();
    w.openFile(samplePath("matmul_bias_relu.onnx"));
    QTRY_VERIFY_WITH_TIMEOUT(!w.isBusy() && !w.graphView()->isLayoutPending(), kPipelineTimeoutMs);
    QSignalSpy selected(w.graphView(), &GraphView::nodeSelected);
    NodeItem* relu = nullptr;
    for (NodeItem* n : w.graphView()->nodeItems())
      if (n->op() == "Relu") relu = n;
    QVERIFY(relu);
    relu->setSelected(true);
    QCOMPARE(selected.count(), 1);
    QCOMPARE(selected.first().first().value<NodeId>(), relu->nodeId());
  }

  void passListModel() {
    REQUIRE_SAMPLE();
    MainWindow w;
    w.setModalErrors(false);
    PassListModel* model = w.passList()->passModel();
    QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    w.openFile(samplePath("matmul_bias_relu.onnx"));
    QTRY_VERIFY_WITH_TIMEOUT(!w.isBusy(), kPipelineTimeoutMs);
    const auto& snaps = w.session()->snapshots();
    QCOMPARE(model->rowCount(), static_cast<int>(snaps.size()));
    QVERIFY(model->index(0).data().toString().startsWith("import"));
    for (int row = 1; row < model->rowCount(); ++row) {
      const QString text = model->index(row).data().toString();
      QVERIFY(text.startsWith(QString::fromStdString(snaps[row].record.pass)));
      QCOMPARE(text.contains("(unchanged)"), !snaps[row].record.changed);
      QVERIFY(text.contains(" ms"));
    }
    // Run again: the model detaches and comes back under the tester.
    w.runPipeline();
    QCOMPARE(model->rowCount(), 0);
    QTRY_VERIFY_WITH_TIMEOUT(!w.isBusy(), kPipelineTimeoutMs);
    QCOMPARE(model->rowCount(), static_cast<int>(w.session()->snapshots().size()));
    QCOMPARE(w.passList()->currentSnapshot(), model->rowCount() - 1);
  }

  void badPipelineShowsError() {
    REQUIRE_SAMPLE();
    MainWindow w;
    w.setModalErrors(false);
    QSignalSpy errors(&w, &MainWindow::errorShown);
    w.setPipeline("no-such-pass");
    w.openFile(samplePath("matmul_bias_relu.onnx"));
    QTRY_VERIFY_WITH_TIMEOUT(!w.isBusy(), kPipelineTimeoutMs);
    QCOMPARE(errors.count(), 1);
    QVERIFY(w.session());  // the model opened; its original graph is shown
    QTRY_VERIFY_WITH_TIMEOUT(!w.graphView()->isLayoutPending(), kPipelineTimeoutMs);
    QVERIFY(!w.graphView()->nodeItems().isEmpty());
  }

  void cancelIsNotAnError() {
    REQUIRE_SAMPLE();
    MainWindow w;
    w.setModalErrors(false);
    QSignalSpy errors(&w, &MainWindow::errorShown);
    w.openFile(samplePath("matmul_bias_relu.onnx"));
    w.cancel();  // wherever the worker is, it stops (or has finished) without an error
    QTRY_VERIFY_WITH_TIMEOUT(!w.isBusy(), kPipelineTimeoutMs);
    QVERIFY2(errors.isEmpty(), qPrintable(firstError(errors)));
  }

  void notAModelShowsError_data() {
    QTest::addColumn<QString>("fileName");
    QTest::addColumn<QByteArray>("contents");
    QTest::newRow("text named .onnx") << "not_a_model.onnx" << QByteArray("hello, not protobuf\n");
    QTest::newRow("empty .onnx") << "empty.onnx" << QByteArray();
    QTest::newRow("missing file") << "" << QByteArray();
  }

  void notAModelShowsError() {
    QFETCH(QString, fileName);
    QFETCH(QByteArray, contents);
    QTemporaryDir dir;
    QString path = dir.filePath("missing.onnx");
    if (!fileName.isEmpty()) {
      path = dir.filePath(fileName);
      QFile f(path);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write(contents);
    }
    MainWindow w;
    w.setModalErrors(false);
    QSignalSpy errors(&w, &MainWindow::errorShown);
    w.openFile(path);
    QTRY_VERIFY_WITH_TIMEOUT(!w.isBusy(), kPipelineTimeoutMs);
    QCOMPARE(errors.count(), 1);
    QVERIFY(!firstError(errors).isEmpty());
    QVERIFY(!w.session());
    QCOMPARE(w.passList()->passModel()->rowCount(), 0);
  }
};

QTEST_MAIN(MainWindowTest)
#include "main_window_test.moc"
